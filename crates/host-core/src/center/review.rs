//! Install review and consent: `review_install` stages the package with the CLI's own
//! `stage`/`plan_with` (nothing is stored; the staging area is dropped again), describes it for
//! the review sheet and keeps what was reviewed under a random `reviewId`; `install` stages the
//! same source again and commits it only if the fresh plan is the reviewed one (same package
//! hash, trust, publisher, permissions, data), so consent covers exactly what was shown.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Value};

use super::uploads::{poisoned, UploadFile};
use super::Center;
use crate::foundation::error::{ErrorClass, ErrorCode, HostError, HostResult};
use crate::foundation::profile::HostProfile;
use crate::install::inspect::{InspectOptions, Inspection};
use crate::install::manifest::{EntryKind, Storage};
use crate::install::package::catalog::CatalogSelect;
use crate::install::package::source::resolve;
use crate::install::package::ResolvedSource;
use crate::install::store::{
    AppSummary, Consent, Given, InstallMode, InstallPlan, ModeChoice, PermissionChange,
    PlanOptions, Store,
};

/// Where the package to review comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewSource {
    /// A folder, `.zip` or catalog file on this machine.
    Path(PathBuf),
    /// An `upload_package` id (used up by the review).
    Upload(String),
}

/// The user's answer to a review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallArgs {
    pub review_id: String,
    /// Must be `true`: the user consented to what the review showed.
    pub consent: bool,
    /// Needed when the review shows a publisher change (`publisherChange.needsAcceptance`).
    pub accept_publisher_change: bool,
    /// Needed when the review shows `existingData` on an install (kept data is reattached).
    pub reattach_data: bool,
}

/// What the review sheet shows (`InstallReview` in `docs/host-api.md`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallReview {
    pub review_id: String,
    pub mode: InstallMode,
    pub app: ReviewApp,
    pub trust: ReviewTrust,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher_change: Option<ReviewPublisherChange>,
    pub package_hash: String,
    pub bytes: u64,
    pub files: usize,
    pub entries: Vec<ReviewEntry>,
    /// Every permission, with its change against the active version (field by field) and what
    /// happens to its grant.
    pub permissions: Vec<PermissionChange>,
    pub network: Value,
    pub storage: Value,
    pub services: Value,
    /// `server-assisted` remote services: endpoint, auth and data boundary (docs/services.md).
    pub remote_services: Vec<crate::install::remote_service::RemoteSummary>,
    pub readiness: Value,
    pub findings: Value,
    pub blockers: Vec<HostError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_version: Option<String>,
    pub existing_data: bool,
    pub needs_consent: Vec<String>,
    /// Installed versions an update removes (two stay side by side).
    pub prunes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewApp {
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub publisher: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewTrust {
    /// `trusted`, `untrusted-signature` (signed by a key this host does not trust) or
    /// `unsigned`. (A dev app is never reviewed here: `apphost dev` installs it.)
    pub state: &'static str,
    /// Installing it is a sideload (shown as a warning; consent covers it).
    pub sideload: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<ReviewSigner>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewSigner {
    pub key_id: Option<String>,
    pub fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPublisherChange {
    /// `signed`, `changed` or `unknown` (see the CLI's plan).
    pub status: &'static str,
    pub from: Option<ReviewSigner>,
    pub to: ReviewSigner,
    /// `install` must pass `acceptPublisherChange: true`.
    pub needs_acceptance: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewEntry {
    pub key: String,
    pub kind: String,
    pub title: Option<String>,
    pub readiness: String,
}

/// What was reviewed, kept until `install` or `cancel_review`.
pub(crate) struct Review {
    source: KeptSource,
    mode: InstallMode,
    options: PlanOptions,
    /// `None`: the review has blockers.
    plan: Option<InstallPlan>,
    blocker: Option<HostError>,
    package_hash: String,
}

pub(crate) enum KeptSource {
    Path(PathBuf),
    /// Dropping it removes the uploaded file: the upload goes away with the review.
    Upload(UploadFile),
    /// A release downloaded from a remote catalog (`center/catalog.rs`); dropping it removes
    /// the downloaded file.
    Catalog(Box<super::catalog_download::KeptDownload>),
}

impl KeptSource {
    fn resolve(&self) -> HostResult<ResolvedSource> {
        let path = match self {
            KeptSource::Path(p) => p,
            KeptSource::Upload(f) => &f.path,
            KeptSource::Catalog(k) => return Ok(k.fetched.source.clone()),
        };
        resolve(path, &CatalogSelect::default())
    }
}

fn signer_of(key_id: Option<&str>, public_key: Option<&str>, name: Option<&str>) -> ReviewSigner {
    ReviewSigner {
        key_id: key_id.map(str::to_owned),
        fingerprint: public_key.and_then(super::settings::fingerprint),
        name: name.map(str::to_owned),
    }
}

fn trust_state(trust: &str) -> &'static str {
    match trust {
        "trusted" => "trusted",
        "unknown-key" => "untrusted-signature",
        _ => "unsigned",
    }
}

/// Whether a planning error means "this package cannot be installed here" (a blocker the
/// review shows) rather than a failure of the host itself.
fn is_blocker(e: &HostError) -> bool {
    !matches!(e.code.class(), ErrorClass::Internal)
}

pub(crate) fn describe(
    insp: &Inspection,
    mode: InstallMode,
    plan: Option<&InstallPlan>,
    permissions: Vec<PermissionChange>,
    blocker: Option<&HostError>,
) -> InstallReview {
    let m = &insp.manifest;
    let sig = &insp.signature;
    let v = m.view();
    let entries = v
        .entries()
        .filter_map(|e| {
            let key = e.key()?.to_owned();
            let readiness = insp
                .readiness
                .entries
                .iter()
                .find(|r| r.entry_key == key)
                .map_or("unknown", |r| r.status.as_str())
                .to_owned();
            Some(ReviewEntry {
                kind: e.kind().map_or("", EntryKind::as_str).into(),
                title: e.title().map(str::to_owned),
                key,
                readiness,
            })
        })
        .collect();
    let storage = insp
        .projection
        .get("storage")
        .cloned()
        .unwrap_or(Value::Null);
    let migrations: Vec<Value> = storage
        .get("plannedMigrations")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|mig| {
                    let path = mig.get("path").and_then(Value::as_str).unwrap_or("");
                    json!({
                        "id": path.rsplit('/').next().unwrap_or(path),
                        "path": path, "size": mig.get("size"), "sha256": mig.get("sha256"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let storage_decl = v.storage();
    let publisher_change = plan.map(InstallPlan::publisher).and_then(|p| {
        matches!(p.status, "signed" | "changed" | "unknown").then(|| ReviewPublisherChange {
            status: p.status,
            from: p.old.as_ref().map(|o| {
                signer_of(
                    o.key_id.as_deref(),
                    o.public_key.as_deref(),
                    o.name.as_deref(),
                )
            }),
            to: signer_of(
                p.new.key_id.as_deref(),
                p.new.public_key.as_deref(),
                p.new.name.as_deref(),
            ),
            needs_acceptance: p.needs_acceptance(),
        })
    });
    let signed = sig.key_id.is_some() || sig.public_key.is_some();
    InstallReview {
        review_id: String::new(),
        mode,
        app: ReviewApp {
            id: m.name().to_owned(),
            name: v.display_name().unwrap_or(m.name()).to_owned(),
            version: m.version().to_owned(),
            description: v.description().unwrap_or_default().to_owned(),
            publisher: v.publisher_name().map(str::to_owned),
            icon: v.presentation().icon().map(str::to_owned),
        },
        trust: ReviewTrust {
            state: trust_state(sig.trust.as_str()),
            sideload: sig.trust.needs_sideload(),
            signer: signed.then(|| {
                signer_of(
                    sig.key_id.as_deref(),
                    sig.public_key.as_deref(),
                    sig.signer.as_deref(),
                )
            }),
        },
        publisher_change,
        package_hash: insp.read.package_hash.clone(),
        bytes: insp.read.total_bytes,
        files: insp.read.files.len(),
        entries,
        permissions,
        network: json!({ "domains": insp.projection.get("networkDomains").cloned().unwrap_or(json!([])) }),
        storage: json!({
            "declared": storage_decl.is_some(),
            "quota": crate::install::store::quota_from(storage_decl),
            "schema": storage_decl.and_then(Storage::schema),
            "migrations": migrations,
        }),
        services: insp
            .projection
            .get("services")
            .cloned()
            .unwrap_or(json!([])),
        remote_services: crate::install::remote_service::summaries(m.view()),
        readiness: json!({
            "status": insp.readiness.status.as_str(),
            "reasons": insp.readiness.blockers,
            "warnings": insp.readiness.warnings,
            "setupActions": insp.readiness.setup_actions,
        }),
        findings: serde_json::to_value(&m.findings).unwrap_or(Value::Null),
        blockers: blocker.cloned().into_iter().collect(),
        from_version: plan.and_then(|p| p.from_version().map(str::to_owned)),
        existing_data: plan.is_some_and(InstallPlan::existing_data),
        needs_consent: plan.map(|p| p.needs_consent().to_vec()).unwrap_or_default(),
        prunes: plan.map(|p| p.prunes().to_vec()).unwrap_or_default(),
    }
}

/// Stages `source` and plans it as `mode` (install when the app is not installed, else update),
/// allowing a sideload and a publisher change so the review can show them. Answers the
/// description, the plan (`None` with a blocker) and the options it was made with. The
/// staging area is always dropped again.
fn stage_and_plan(
    store: &Store,
    source: &ResolvedSource,
    progress: &mut dyn FnMut(u64, u64),
) -> HostResult<(
    InstallReview,
    InstallMode,
    PlanOptions,
    HostResult<InstallPlan>,
    String,
)> {
    let keys = store.trusted_keys()?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(store.limits()?, &profile, &keys)
        .with_services_policy(store.data_dir());
    let staged = store.stage(source, &opts, progress)?;
    let mode = store.mode_for(&staged, ModeChoice::ByInstalled)?;
    let options = PlanOptions {
        sideload: true,
        accept_new_publisher: true,
    };
    let insp = staged.inspection();
    let plan = store.plan_with(&staged, mode, options);
    let permissions = match &plan {
        Ok(p) => p.permissions().to_vec(),
        Err(_) => preview_permissions(store, insp, mode),
    };
    let review = describe(
        insp,
        mode,
        plan.as_ref().ok(),
        permissions,
        plan.as_ref().err(),
    );
    let hash = insp.read.package_hash.clone();
    // Only a review: the staging goes away with `staged` (dropped here).
    Ok((review, mode, options, plan, hash))
}

/// The permission list of a package that cannot be planned (it has a blocker): still shown.
fn preview_permissions(
    store: &Store,
    insp: &Inspection,
    mode: InstallMode,
) -> Vec<PermissionChange> {
    let name = insp.manifest.name();
    let (old, granted) = match mode {
        InstallMode::Update => {
            let old = store
                .active_app(name)
                .map(|a| a.manifest.view().permissions_raw().to_vec())
                .unwrap_or_default();
            (old, store.grants(name).unwrap_or_default())
        }
        InstallMode::Install => (Vec::new(), BTreeSet::new()),
    };
    crate::install::store::diff_permissions(&old, insp.manifest.view().permissions_raw(), &granted)
}

impl Center {
    /// Reads, verifies and plans a package without installing it, and keeps the review for
    /// `install`. A package that cannot be read is an error; one that can be read but not
    /// installed here is a review with `blockers`. `progress(bytesVerified, bytesTotal)`.
    /// Nothing in the data directory changes (an upload's file goes away if this fails).
    pub fn review_install(
        &self,
        source: ReviewSource,
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<InstallReview> {
        let kept = match source {
            ReviewSource::Path(p) => KeptSource::Path(std::path::absolute(&p).unwrap_or(p)),
            ReviewSource::Upload(id) => KeptSource::Upload(self.take_upload(&id)?),
        };
        self.review_kept(kept, progress)
    }

    /// Reviews a kept source (a path, an upload or a catalog download) and keeps the review.
    pub(crate) fn review_kept(
        &self,
        kept: KeptSource,
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<InstallReview> {
        let resolved = kept.resolve()?;
        let store = super::open_locked(&self.dir)?;
        let (review, mode, options, plan, package_hash) =
            stage_and_plan(&store, &resolved, progress)?;
        drop(store);
        let mut review = review;
        let (plan, blocker) = match plan {
            Ok(p) => (Some(p), None),
            Err(e) if is_blocker(&e) => (None, Some(e)),
            Err(e) => return Err(e),
        };
        let kept = Review {
            source: kept,
            mode,
            options,
            plan,
            blocker,
            package_hash,
        };
        review.review_id = self.reviews.lock().map_err(poisoned)?.insert(kept)?;
        Ok(review)
    }

    /// Drops a review (and its upload); for a catalog review still downloading, `review_id` is
    /// its `progressId` and the transfer stops.
    pub fn cancel_review(&self, review_id: &str) -> HostResult<()> {
        // A catalog review still downloading is cancelled by its `progressId`.
        if self.downloads.cancel(review_id) {
            return Ok(());
        }
        self.reviews
            .lock()
            .map_err(poisoned)?
            .take(review_id)
            .map(drop)
            .ok_or_else(|| review_not_found(review_id))
    }

    /// Installs (or updates to) what a review showed, after the user's consent. The review is
    /// used up, whatever the outcome (a refused consent leaves it usable). The package is read
    /// again and must plan exactly as reviewed: else `install.plan_mismatch` and nothing is
    /// installed (review again). Required permissions are granted by this consent.
    pub fn install(
        &self,
        args: &InstallArgs,
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<AppSummary> {
        {
            let reviews = self.reviews.lock().map_err(poisoned)?;
            let review = reviews
                .get(&args.review_id)
                .ok_or_else(|| review_not_found(&args.review_id))?;
            if !args.consent {
                return Err(HostError::new(
                    ErrorCode::InstallConsentRequired,
                    "installing needs your consent (consent: true)",
                ));
            }
            if let Some(plan) = &review.plan {
                if plan.publisher().needs_acceptance() && !args.accept_publisher_change {
                    return Err(HostError::new(
                        ErrorCode::InstallPublisherChanged,
                        format!(
                            "{} is published by another key than the one installed before; accept the publisher change to continue",
                            plan.app()
                        ),
                    )
                    .with("app", plan.app())
                    .with("publisher", plan.publisher()));
                }
                if plan.mode() == InstallMode::Install
                    && plan.existing_data()
                    && !args.reattach_data
                {
                    return Err(HostError::new(
                        ErrorCode::InstallConsentRequired,
                        format!(
                            "data kept from an earlier install of {} will be used again; consent to reattach it (reattachData: true)",
                            plan.app()
                        ),
                    )
                    .with("app", plan.app()));
                }
            }
        }
        let review = self
            .reviews
            .lock()
            .map_err(poisoned)?
            .take(&args.review_id)
            .ok_or_else(|| review_not_found(&args.review_id))?;
        let (Some(reviewed), None) = (&review.plan, &review.blocker) else {
            return Err(review
                .blocker
                .clone()
                .unwrap_or_else(|| HostError::new(ErrorCode::Internal, "review without a plan")));
        };
        let resolved = review.source.resolve()?;
        let store = super::open_locked(&self.dir)?;
        let keys = store.trusted_keys()?;
        let profile = HostProfile::current();
        let opts = InspectOptions::preview(store.limits()?, &profile, &keys)
            .with_services_policy(store.data_dir());
        // The reviewed plan is the consent: the package is read again and must plan the same.
        let mut as_reviewed = |insp: &Inspection,
                               fresh: &InstallPlan|
         -> HostResult<BTreeSet<String>> {
            if fresh != reviewed {
                let why = if fresh.package_hash() != review.package_hash {
                    "the package changed since it was reviewed; review it again"
                } else {
                    "the installed apps or the trusted keys changed since the review; review it again"
                };
                return Err(HostError::new(ErrorCode::InstallPlanMismatch, why)
                    .with("reviewedPackageHash", &review.package_hash)
                    .with("packageHash", fresh.package_hash()));
            }
            Given.grant(insp, fresh)
        };
        let summary = store
            .drive_install(
                &resolved,
                &opts,
                ModeChoice::Fixed(review.mode),
                review.options,
                progress,
                &mut as_reviewed,
            )
            .map(|installed| installed.summary)?;
        if let KeptSource::Catalog(k) = &review.source {
            // After the commit point: the app is installed; a failure here only means its
            // updates are not followed (the Browse page still finds it in the catalog).
            if let Err(e) = k.follow(&self.dir) {
                tracing::warn!(error = %e, "cannot record the catalog the app follows");
            }
        }
        Ok(summary)
    }
}

fn review_not_found(id: &str) -> HostError {
    HostError::new(
        ErrorCode::ReviewNotFound,
        "no such review: it was already used, cancelled or expired; review the package again",
    )
    .with("reviewId", id)
}
