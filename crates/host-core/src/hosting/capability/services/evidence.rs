//! `lime.evidence`: the app's evidence records (RuntimeCore's `AppEvidence`) and the evidence
//! pack export. Records may point at the same app's artifacts (by id; resolved in the app's own
//! artifact store, so another app's ids are unknown here).

use std::path::Path;

use runtime_core::app_artifacts::now_rfc3339;
use runtime_core::app_evidence::{
    check_kind, AppEvidence, EvidenceError, EvidenceInput, EvidenceLimits, MAX_ARTIFACT_REFS,
};
use runtime_core::app_handles::AppHandles;
use serde_json::{json, Value};

use super::args::{invalid, object, opt_str, req_str};
use super::artifacts::{limit, provenance, ArtifactsService};
use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::EvidenceMethod;

#[derive(Default)]
pub(super) struct EvidenceService {
    open: AppHandles<AppEvidence>,
}

impl EvidenceService {
    pub(super) fn close_app(&mut self, app: &str) {
        self.open.close(app);
    }

    fn store(&mut self, apps_data: &Path, a: &Allowed) -> Result<&mut AppEvidence, CallError> {
        self.open.get_or_open(a.app(), || {
            AppEvidence::open(&apps_data.join(a.app()), EvidenceLimits::default())
                .map_err(|e| evidence_err(a, e))
        })
    }

    pub(super) fn call(
        &mut self,
        apps_data: &Path,
        artifacts: &mut ArtifactsService,
        a: &Allowed,
        method: EvidenceMethod,
        args: &Value,
    ) -> Result<Value, CallError> {
        match method {
            EvidenceMethod::Record => {
                let args = &super::shapes::evidence_record(a, args)?;
                let o = object(a, args, &["kind", "summary", "data", "artifactIds"])?;
                let kind = req_str(a, o, "kind")?.to_owned();
                // Checked before the app's files are opened (and again by the store).
                check_kind(&kind).map_err(|e| evidence_err(a, e))?;
                if kind.starts_with(crate::hosting::workflow::run_evidence::RESERVED_KIND_PREFIX) {
                    // The host's own records (a workflow run's evidence): an app cannot forge one.
                    return Err(err(
                        a,
                        ErrorCode::InvalidArgument,
                        "kinds starting with \"apphost.\" are the host's own",
                        Some("evidence.reserved_kind"),
                    ));
                }
                let summary = opt_str(a, o, "summary")?.unwrap_or("").to_owned();
                let data = o.get("data").cloned().unwrap_or(Value::Null);
                let artifact_ids: Vec<String> = match o.get("artifactIds") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(ids)) if ids.len() <= MAX_ARTIFACT_REFS => ids
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| invalid(a, "args.artifactIds must be strings"))?,
                    Some(Value::Array(_)) => {
                        return Err(err(
                            a,
                            ErrorCode::InvalidArgument,
                            &format!("at most {MAX_ARTIFACT_REFS} artifactIds"),
                            Some("evidence.too_large"),
                        ))
                    }
                    Some(_) => return Err(invalid(a, "args.artifactIds must be an array")),
                };
                let input = EvidenceInput {
                    kind,
                    summary,
                    data,
                    artifact_ids,
                };
                if !input.artifact_ids.is_empty() && !a.artifacts_readable() {
                    // Resolving the ids would tell the app which artifacts exist.
                    return Err(artifacts_not_allowed(a));
                }
                let prov = provenance(a)?;
                let arts = if input.artifact_ids.is_empty() {
                    None
                } else {
                    artifacts.existing(apps_data, a)?
                };
                let rec = self
                    .store(apps_data, a)?
                    .record_keyed(a.idempotency_key(), &input, arts, &prov)
                    .map_err(|e| evidence_err(a, e))?;
                Ok(serde_json::to_value(rec).unwrap_or(Value::Null))
            }
            EvidenceMethod::List => {
                let o = object(a, args, &["kind", "cursor", "limit"])?;
                let kind = opt_str(a, o, "kind")?;
                let cursor = opt_str(a, o, "cursor")?;
                let limit = limit(a, o)?;
                let page = self
                    .store(apps_data, a)?
                    .list(kind, cursor, limit)
                    .map_err(|e| evidence_err(a, e))?;
                Ok(serde_json::to_value(page).unwrap_or(Value::Null))
            }
            EvidenceMethod::Export => {
                // `taskId` picks the pack's `runtimeCorrelation` (`evidence_correlation.rs`).
                let o = object(a, args, &["kind", "taskId"])?;
                let kind = opt_str(a, o, "kind")?;
                let prov = a.provenance();
                let app = json!({
                    "appId": a.app(), "appVersion": a.version(),
                    "packageHash": prov["packageHash"], "manifestHash": prov["manifestHash"],
                });
                if !a.artifacts_readable() {
                    let pack = self
                        .store(apps_data, a)?
                        .export(app, kind, None, &now_rfc3339())
                        .map_err(|e| evidence_err(a, e))?;
                    return Ok(withhold_artifacts(pack));
                }
                let arts = artifacts.existing(apps_data, a)?;
                self.store(apps_data, a)?
                    .export(app, kind, arts, &now_rfc3339())
                    .map_err(|e| evidence_err(a, e))
            }
        }
    }
}

fn artifacts_not_allowed(a: &Allowed) -> CallError {
    err(
        a,
        ErrorCode::PermissionDenied,
        "this entry may not read the app's artifacts (lime.artifacts and a granted artifact permission)",
        Some("evidence.artifacts_not_allowed"),
    )
}

/// An evidence pack for an entry that may not read artifacts: each referenced artifact keeps
/// only the id and SHA-256 its records already carry, marked `withheld` (no name, type, size,
/// date, provenance, nor whether it still exists).
fn withhold_artifacts(mut pack: Value) -> Value {
    if let Some(list) = pack.get_mut("artifacts").and_then(Value::as_array_mut) {
        for a in list.iter_mut() {
            *a = json!({
                "artifactId": a.get("artifactId").cloned().unwrap_or(Value::Null),
                "sha256": a.get("sha256").cloned().unwrap_or(Value::Null),
                "withheld": true,
            });
        }
    }
    pack
}

fn evidence_err(a: &Allowed, e: EvidenceError) -> CallError {
    super::store_err(
        a,
        "evidence",
        e.is_host_failure(),
        e.app_code(),
        e.cause_code(),
        || e.to_string(),
    )
}
