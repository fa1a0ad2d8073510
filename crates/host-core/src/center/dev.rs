//! `apphost dev <folder>`: a folder installed as a dev app and updated on every valid save.
//!
//! A dev install goes through the same `stage`/`plan_with`/`commit` as any install, sideloaded
//! (never trusted as signed: its summary says `dev`), with the version `<version>+dev.<ms>` so
//! each save is a new version (the previous one stays for rollback, as with any update). It is
//! kept apart from normal installs by a `settings` row `dev-app/<name>` that also holds the last
//! result for the host UI (`dev_status`): an app installed normally is never turned into a dev
//! app, and a dev app's row is what marks it DEV in every list.
//!
//! On a change: invalid (unreadable, rejected, blocked) => nothing is installed, the last good
//! version keeps running, the findings are recorded; valid and not widening permissions =>
//! updated; widening (a permission added or changed) => only with the author's consent, else
//! held (`awaiting-consent`) until a later save or a consent.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::foundation::error::{ErrorClass, ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::install::inspect::InspectOptions;
use crate::install::manifest::{Finding, Severity};
use crate::install::package::catalog::CatalogSelect;
use crate::install::package::source::resolve;
use crate::install::store::{
    Given, InstallMode, ModeChoice, PermissionChange, PlanOptions, Store, DEV_PREFIX,
};

/// How often a pass reads the folder again when a file changed while it was read.
const CHANGED_RETRIES: u32 = 5;

/// Most findings kept in a dev status.
pub const MAX_FINDINGS: usize = 50;

/// One problem found in the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevFinding {
    pub severity: String,
    pub code: String,
    pub path: String,
    pub message: String,
}

/// The last result of a dev app, as `dev_status` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevStatus {
    pub app_id: String,
    pub folder: String,
    /// `installed`, `updated`, `unchanged` (valid again, same as running), `invalid` (the last
    /// good version keeps running) or
    /// `awaiting-consent` (the change widens permissions).
    pub status: String,
    /// The version running (the last good one).
    pub version: Option<String>,
    pub at: String,
    pub findings: Vec<DevFinding>,
    /// `awaiting-consent`: the permissions added or changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<crate::install::store::PermissionChange>")]
    pub pending: Vec<Value>,
    /// `awaiting-consent`: the digest of the held change (its package hash and `pending`), the
    /// one `dev_consent` accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub pending_digest: Option<String>,
    /// How many saves were installed.
    pub updates: u64,
}

/// What one pass over the folder did.
#[derive(Debug, Clone, PartialEq)]
pub enum DevOutcome {
    /// Installed (first pass) or updated: the new version, and how long the pass took.
    Committed {
        version: String,
        first: bool,
        millis: f64,
    },
    /// The package hash is the one installed: nothing to do.
    Unchanged,
    /// After an invalid pass, the folder is back to the version running: valid again.
    Recovered,
    /// Not installed: the last good version keeps running.
    Invalid(Vec<DevFinding>),
    /// The change widens permissions and was not consented to.
    AwaitingConsent(Vec<PermissionChange>),
}

/// One `apphost dev` session over one folder.
pub struct DevSession {
    dir: DataDir,
    folder: PathBuf,
    app: Option<String>,
    last_hash: Option<String>,
    /// What the last invalid pass saw (the package hash, or the error that kept it from being
    /// read): the same again is `Unchanged`, not a second report.
    last_invalid: Option<String>,
    updates: u64,
    /// Whether the stale lock / signature note was given (once per session).
    said_ignored: bool,
    /// Notes for the author not yet taken ([`DevSession::take_notes`]).
    notes: Vec<String>,
}

fn finding_of(e: &HostError) -> DevFinding {
    DevFinding {
        severity: "error".into(),
        code: e.code.as_str().into(),
        path: e
            .details
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("package")
            .into(),
        message: e.message.clone(),
    }
}

fn dev_finding(f: &Finding) -> DevFinding {
    DevFinding {
        severity: if f.severity == Severity::Error {
            "error".into()
        } else {
            "warning".into()
        },
        code: f.code.into(),
        path: match f.line {
            Some(l) => format!("{}:{l}", f.path),
            None => f.path.clone(),
        },
        message: match &f.fix {
            Some(fix) => format!("{} (instead: {fix})", f.message),
            None => f.message.clone(),
        },
    }
}

/// The one note a session gives when it ignores a stale lock or signature.
fn ignored_note(ignored: &[HostError]) -> String {
    let why: Vec<String> = ignored
        .iter()
        .map(|e| format!("{} ({})", e.message, e.code.as_str()))
        .collect();
    format!(
        "ignoring app.lock.json / app.signature.yaml: a dev install is never trusted, so they are not checked; run `apphost sign` again before you publish. {}",
        why.join("; ")
    )
}

fn dev_key(app: &str) -> String {
    format!("{DEV_PREFIX}{app}")
}

/// Whether an error means "the folder is not installable as it is" (a finding) rather than a
/// failure of the host (an error of the dev command).
fn is_finding(e: &HostError) -> bool {
    !matches!(e.code.class(), ErrorClass::Internal)
}

impl DevSession {
    pub fn new(dir: DataDir, folder: &Path) -> HostResult<DevSession> {
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned());
        if !folder.is_dir() {
            return Err(HostError::new(
                ErrorCode::SourceNotFound,
                format!("{} is not a folder", folder.display()),
            )
            .with("path", folder.display().to_string()));
        }
        Ok(DevSession {
            dir,
            folder,
            app: None,
            last_hash: None,
            last_invalid: None,
            updates: 0,
            said_ignored: false,
            notes: Vec::new(),
        })
    }

    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The app's name, once a pass has read it.
    pub fn app(&self) -> Option<&str> {
        self.app.as_deref()
    }

    /// What to call the app in output: its name, or before one was read, the folder's name.
    pub fn label(&self) -> String {
        match &self.app {
            Some(a) => a.clone(),
            None => self.folder.file_name().map_or_else(
                || self.folder.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        }
    }

    /// Notes gathered by the passes so far (each given once), e.g. that a stale lock and
    /// signature are ignored.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Reads the folder and installs it if it is valid and changed. `consent` is asked when an
    /// update widens permissions (not for the first install: running `apphost dev` on one's
    /// own folder is that consent). Errors are the host's own failures only, and an app of the
    /// same name installed normally (`dev.not_a_dev_install`).
    pub fn apply(
        &mut self,
        consent: &mut dyn FnMut(&[PermissionChange]) -> bool,
    ) -> HostResult<DevOutcome> {
        self.apply_with(&mut |_, widening| consent(widening))
    }

    /// [`DevSession::apply`], the consent also seeing the held change's digest.
    fn apply_with(
        &mut self,
        consent_to: &mut dyn FnMut(&str, &[PermissionChange]) -> bool,
    ) -> HostResult<DevOutcome> {
        let started = Instant::now();
        let store = super::open_locked(&self.dir)?;
        let source = resolve(&self.folder, &CatalogSelect::default())?;
        let keys = store.trusted_keys()?;
        let profile = HostProfile::current();
        let opts = InspectOptions::preview(store.limits()?, &profile, &keys)
            .with_services_policy(store.data_dir());
        // A file being written while it is read (the editor is still saving) is not a finding:
        // read again after a moment.
        let mut attempt = 0;
        let staged = loop {
            match store.stage_dev(&source, &opts, &mut |_, _| {}) {
                Err(e)
                    if attempt < CHANGED_RETRIES
                        && matches!(
                            e.code,
                            ErrorCode::SourceChanged | ErrorCode::ArchiveSizeMismatch
                        ) =>
                {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(40));
                }
                other => break other,
            }
        };
        let mut staged = match staged {
            Ok(s) => s,
            Err(e) if is_finding(&e) => {
                let seen = format!("{}: {}", e.code.as_str(), e.message);
                if self.last_invalid.as_deref() == Some(seen.as_str()) {
                    return Ok(DevOutcome::Unchanged);
                }
                self.last_invalid = Some(seen);
                let f = vec![finding_of(&e)];
                self.record(&store, "invalid", &f, &[])?;
                return Ok(DevOutcome::Invalid(f));
            }
            Err(e) => return Err(e),
        };
        let insp = staged.inspection();
        let name = insp.manifest.name().to_owned();
        let hash = insp.read.package_hash.clone();
        if !insp.ignored.is_empty() && !self.said_ignored {
            self.said_ignored = true;
            self.notes.push(ignored_note(&insp.ignored));
        }
        let authoring = insp.authoring_findings(&opts.limits);
        let mut findings: Vec<DevFinding> = insp
            .manifest
            .findings
            .iter()
            .chain(authoring.iter())
            .take(MAX_FINDINGS)
            .map(dev_finding)
            .collect();
        if let Some(app) = &self.app {
            if *app != name {
                if self.last_invalid.as_deref() == Some(hash.as_str()) {
                    return Ok(DevOutcome::Unchanged);
                }
                self.last_invalid = Some(hash);
                let f = vec![DevFinding {
                    severity: "error".into(),
                    code: ErrorCode::DevAppRenamed.as_str().into(),
                    path: "APP.md#/name".into(),
                    message: format!(
                        "the folder's app name changed from {app} to {name}; restart apphost dev to develop another app"
                    ),
                }];
                self.record(&store, "invalid", &f, &[])?;
                return Ok(DevOutcome::Invalid(f));
            }
        }
        let installed = store.app_names()?.contains(&name);
        if installed {
            // What is installed now (another process, e.g. the window's `dev_consent`, may
            // have installed this very folder meanwhile).
            if let Ok(s) = store.summary(&name, &profile) {
                self.last_hash = Some(s.package_hash);
            }
        }
        if installed && !store.is_dev(&name)? {
            return Err(HostError::new(
                ErrorCode::DevNotADevInstall,
                format!("{name} is installed normally; uninstall it (keeping its data if you like) before developing it with apphost dev"),
            )
            .with("app", &name));
        }
        self.app = Some(name.clone());
        if installed && self.last_hash.is_none() {
            self.last_hash = store.summary(&name, &profile).ok().map(|s| s.package_hash);
        }
        if self.last_invalid.as_deref() == Some(hash.as_str()) {
            return Ok(DevOutcome::Unchanged);
        }
        if self.last_hash.as_deref() == Some(hash.as_str()) {
            if self.last_invalid.take().is_some() {
                // Back to what is running (an invalid save undone): valid again, nothing to do.
                self.record(&store, "unchanged", &findings, &[])?;
                return Ok(DevOutcome::Recovered);
            }
            return Ok(DevOutcome::Unchanged);
        }
        let build = jiff::Timestamp::now().as_millisecond().max(0) as u64;
        staged.set_dev_build(build);
        let mode = if installed {
            InstallMode::Update
        } else {
            InstallMode::Install
        };
        let options = PlanOptions {
            sideload: true,
            accept_new_publisher: true,
        };
        // Every refusal below drops `planned`/`staged`, which removes the staging folder.
        let planned = match store.plan_staged(staged, ModeChoice::Fixed(mode), options) {
            Ok(p) => p,
            Err(e) => {
                if !is_finding(&e) {
                    return Err(e);
                }
                findings.retain(|f| f.severity == "error");
                findings.insert(0, finding_of(&e));
                self.last_invalid = Some(hash);
                self.record(&store, "invalid", &findings, &[])?;
                return Ok(DevOutcome::Invalid(findings));
            }
        };
        let plan = planned.plan();
        let widening: Vec<PermissionChange> = plan
            .permissions()
            .iter()
            .filter(|p| mode == InstallMode::Update && matches!(p.change, "added" | "changed"))
            .cloned()
            .collect();
        let pending: Vec<Value> = widening
            .iter()
            .map(|p| serde_json::to_value(p).unwrap_or_default())
            .collect();
        let digest = pending_digest(&hash, &pending);
        if !widening.is_empty() && !consent_to(&digest, &widening) {
            self.record_pending(
                &store,
                "awaiting-consent",
                &findings,
                &pending,
                Some(digest),
            )?;
            return Ok(DevOutcome::AwaitingConsent(widening));
        }
        // The row first: the new version is DEV from the moment it exists.
        self.record(
            &store,
            if installed { "updating" } else { "installing" },
            &findings,
            &[],
        )?;
        // Running `apphost dev` on one's own folder, and a widening just consented to above,
        // is the consent to what the plan asks.
        let summary = match planned.commit(&store, &mut Given) {
            Ok(installed) => installed.summary,
            Err(e) if is_finding(&e) => {
                let f = vec![finding_of(&e)];
                self.record(&store, "invalid", &f, &[])?;
                return Ok(DevOutcome::Invalid(f));
            }
            Err(e) => return Err(e),
        };
        self.last_hash = Some(summary.package_hash.clone());
        self.last_invalid = None;
        self.updates += 1;
        self.record(
            &store,
            if installed { "updated" } else { "installed" },
            &findings,
            &[],
        )?;
        Ok(DevOutcome::Committed {
            version: summary.active_version,
            first: !installed,
            millis: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// Writes the dev row: folder, result, findings (audited `dev.status`).
    fn record(
        &self,
        store: &Store,
        status: &str,
        findings: &[DevFinding],
        pending: &[Value],
    ) -> HostResult<()> {
        self.record_pending(store, status, findings, pending, None)
    }

    fn record_pending(
        &self,
        store: &Store,
        status: &str,
        findings: &[DevFinding],
        pending: &[Value],
        pending_digest: Option<String>,
    ) -> HostResult<()> {
        let Some(app) = &self.app else {
            return Ok(()); // nothing was ever read: no app to mark
        };
        let version = store
            .summary(app, &HostProfile::current())
            .ok()
            .map(|s| s.active_version);
        let row = DevStatus {
            app_id: app.clone(),
            folder: self.folder.display().to_string(),
            status: status.into(),
            version,
            at: jiff::Timestamp::now().to_string(),
            findings: findings.iter().take(MAX_FINDINGS).cloned().collect(),
            pending: pending.to_vec(),
            pending_digest,
            updates: self.updates,
        };
        let text = serde_json::to_string(&row).unwrap_or_default();
        store.write_settings(
            &[(&dev_key(app), Some(&text))],
            "dev.status",
            &json!({"app": app, "status": status, "findings": row.findings.len()}),
        )
    }

    /// Empties the dev app's `lime.storage` database (its migrations run again on next use).
    pub fn reset_storage(&self) -> HostResult<bool> {
        let Some(app) = &self.app else {
            return Ok(false);
        };
        let store = super::open_locked(&self.dir)?;
        let id = runtime_core::AppId::new(app)
            .map_err(|e| HostError::new(ErrorCode::CliUsage, e.to_string()))?;
        let base = self.dir.apps_data().join(id.as_str());
        let mut removed = false;
        for name in ["storage.sqlite", "storage.sqlite-wal", "storage.sqlite-shm"] {
            let p = base.join(name);
            match std::fs::remove_file(&p) {
                Ok(()) => removed = true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(HostError::io(ErrorCode::StoreIo, "cannot remove", &p, e)),
            }
        }
        store.record_audit(
            "dev.reset_storage",
            Some(app),
            None,
            &json!({"removed": removed}),
        )?;
        Ok(removed)
    }
}

/// The digest of a held change: SHA-256 over the folder's package hash and the permission
/// changes as shown (`pending`), hex. The same folder and the same diff give the same digest.
fn pending_digest(package_hash: &str, pending: &[Value]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(package_hash.as_bytes());
    h.update(b"\n");
    h.update(
        serde_json::to_string(pending)
            .unwrap_or_default()
            .as_bytes(),
    );
    hex::encode(h.finalize())
}

/// `dev_consent`: the host UI's consent to the change a dev app holds (`awaiting-consent`).
/// The folder is read and planned again; the change is installed only if it is still the one
/// shown (`digest` = the status's `pendingDigest`), else nothing is installed and the answer is
/// `dev.consent_stale` (the status then shows the change as it is now, to be shown again).
pub fn dev_consent(dir: &DataDir, app: &str, digest: &str) -> HostResult<DevStatus> {
    let row = dev_status(dir)?
        .into_iter()
        .find(|s| s.app_id == app)
        .ok_or_else(|| {
            HostError::new(
                ErrorCode::AppNotInstalled,
                format!("{app} is not an apphost dev install"),
            )
            .with("app", app)
        })?;
    let stale = |why: &str| {
        HostError::new(
            ErrorCode::DevConsentStale,
            format!("{app}'s held change is not the one shown ({why}); look at it again"),
        )
        .with("app", app)
    };
    if row.status != "awaiting-consent" || row.pending_digest.as_deref() != Some(digest) {
        return Err(stale("it was replaced or installed"));
    }
    let mut session = DevSession::new(dir.clone(), Path::new(&row.folder))?;
    session.app = Some(row.app_id.clone());
    session.updates = row.updates;
    let outcome = session.apply_with(&mut |now, _| now == digest)?;
    match outcome {
        DevOutcome::Committed { .. } => {}
        DevOutcome::AwaitingConsent(_) => return Err(stale("the folder changed since")),
        DevOutcome::Unchanged | DevOutcome::Recovered => {
            return Err(stale("the folder is what is installed"))
        }
        DevOutcome::Invalid(_) => return Err(stale("the folder is invalid now")),
    }
    dev_status(dir)?
        .into_iter()
        .find(|s| s.app_id == app)
        .ok_or_else(|| HostError::new(ErrorCode::AppNotInstalled, format!("{app} vanished")))
}

/// Every dev app's last result.
pub fn dev_status(dir: &DataDir) -> HostResult<Vec<DevStatus>> {
    let store = Store::open(dir)?;
    Ok(store
        .settings()?
        .into_iter()
        .filter(|(k, _)| k.starts_with(DEV_PREFIX))
        .filter_map(|(_, v)| serde_json::from_str(&v).ok())
        .collect())
}
