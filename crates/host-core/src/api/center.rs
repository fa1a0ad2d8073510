//! The app center's commands (`docs/host-api.md`, "App center" and "Dev loop"): thin adapters
//! from JSON arguments to `crate::center`, which does the work. Install progress (bytes
//! verified while a review or an install reads the package) goes to the outbox as
//! `install:progress` events.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{answer, args, Command, NoArgs, Session};
use crate::center::diagnostics::{self, LiveDiagnostics};
use crate::center::lifecycle::{self, UninstallMode};
use crate::center::{detail, dev, grants, settings, InstallArgs, ReviewSource};
use crate::foundation::error::HostResult;
use crate::install::store::AuditQuery;

/// The outbox event kind of install progress.
pub const INSTALL_PROGRESS: &str = "install:progress";

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "review_install" => review_install,
    "install" => install,
    "cancel_review" => cancel_review,
    "app_detail" => app_detail,
    "list_grants" => list_grants,
    "grant" => grant,
    "revoke" => revoke,
    "set_enabled" => set_enabled,
    "uninstall_plan" => uninstall_plan,
    "uninstall" => uninstall,
    "rollback" => rollback,
    "audit" => audit,
    "verify_store" => verify_store,
    "diagnostics_bundle" => diagnostics_bundle,
    "trusted_keys" => trusted_keys,
    "add_trusted_key" => add_trusted_key,
    "remove_trusted_key" => remove_trusted_key,
    "host_settings" => host_settings,
    "set_theme" => set_theme,
    "dev_status" => dev_status,
    "dev_consent" => dev_consent,
    "bind_secret" => bind_secret,
}

/// Pushes `install:progress` at most every 2% (and at the end), so a large package costs the
/// outbox about 50 events.
pub(crate) fn progress<'a>(session: &'a Session, tag: Value) -> impl FnMut(u64, u64) + 'a {
    let mut last = 0u64;
    move |done, total| {
        let step = (total / 50).max(1);
        if done == total || done >= last + step {
            last = done;
            let mut payload = tag.clone();
            payload["bytesVerified"] = json!(done);
            payload["bytesTotal"] = json!(total);
            session.outbox.push(INSTALL_PROGRESS, payload);
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ReviewSourceArg")]
pub(crate) enum SourceArg {
    Path(PathBuf),
    UploadId(String),
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ReviewInstallArgs")]
pub(crate) struct ReviewArgs {
    source: SourceArg,
    /// Echoed in the `install:progress` events of this review (the review id does not exist yet).
    progress_id: Option<String>,
}

fn review_install(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ReviewArgs = args("review_install", raw)?;
    let source = match a.source {
        SourceArg::Path(p) => ReviewSource::Path(p),
        SourceArg::UploadId(id) => ReviewSource::Upload(id),
    };
    let tag = json!({"phase": "review", "progressId": a.progress_id});
    answer(
        session
            .center
            .review_install(source, &mut progress(session, tag))?,
    )
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "InstallArgs")]
pub(crate) struct InstallArgsWire {
    review_id: String,
    consent: bool,
    #[serde(default)]
    accept_publisher_change: bool,
    #[serde(default)]
    reattach_data: bool,
}

fn install(session: &Session, raw: Value) -> HostResult<Value> {
    let a: InstallArgsWire = args("install", raw)?;
    let tag = json!({"phase": "install", "reviewId": a.review_id});
    let done = session.center.install(
        &InstallArgs {
            review_id: a.review_id,
            consent: a.consent,
            accept_publisher_change: a.accept_publisher_change,
            reattach_data: a.reattach_data,
        },
        &mut progress(session, tag),
    )?;
    answer(done)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ReviewIdArgs")]
pub(crate) struct ReviewId {
    review_id: String,
}

fn cancel_review(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ReviewId = args("cancel_review", raw)?;
    session.center.cancel_review(&a.review_id)?;
    Ok(Value::Null)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AppIdArgs")]
pub(crate) struct AppId {
    app_id: String,
}

fn app_detail(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AppId = args("app_detail", raw)?;
    answer(detail::app_detail(&session.data, &a.app_id)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ListGrantsArgs")]
pub(crate) struct MaybeApp {
    app_id: Option<String>,
}

fn list_grants(session: &Session, raw: Value) -> HostResult<Value> {
    let a: MaybeApp = args("list_grants", raw)?;
    answer(grants::list_grants(&session.data, a.app_id.as_deref())?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ScopeArgs")]
pub(crate) struct Scope {
    app_id: String,
    scope: String,
}

fn grant(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Scope = args("grant", raw)?;
    answer(grants::grant(&session.data, &a.app_id, &a.scope)?)
}

fn revoke(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Scope = args("revoke", raw)?;
    answer(grants::revoke(&session.data, &a.app_id, &a.scope)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "SetEnabledArgs")]
pub(crate) struct Enabled {
    app_id: String,
    enabled: bool,
}

fn set_enabled(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Enabled = args("set_enabled", raw)?;
    answer(lifecycle::set_enabled(&session.data, &a.app_id, a.enabled)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "UninstallPlanArgs")]
pub(crate) struct Mode {
    app_id: String,
    mode: UninstallMode,
}

fn uninstall_plan(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Mode = args("uninstall_plan", raw)?;
    answer(lifecycle::plan(&session.data, &a.app_id, a.mode)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "UninstallArgs")]
pub(crate) struct Uninstall {
    app_id: String,
    mode: UninstallMode,
    export_path: Option<PathBuf>,
}

fn uninstall(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Uninstall = args("uninstall", raw)?;
    let out = lifecycle::uninstall(&session.data, &a.app_id, a.mode, a.export_path.as_deref())?;
    let kept = (a.mode == UninstallMode::KeepData).then(|| out.plan.data_dir.clone());
    answer(Uninstalled {
        removed: out.plan,
        kept,
        exported_to: out.exported_to,
        export_skipped: out.export_skipped,
        warnings: out.warnings,
    })
}

/// What `uninstall` answers.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Uninstalled {
    /// The plan that ran.
    pub removed: crate::install::store::CleanupPlan,
    /// The data folder kept (`keep-data`), else null.
    pub kept: Option<String>,
    pub exported_to: Option<String>,
    /// Entries of the app's data the export left out (links, special files, too deep).
    #[schemars(with = "Vec<crate::install::store::SkippedEntrySchema>")]
    pub export_skipped: Vec<runtime_core::SkippedEntry>,
    /// Problems after the commit point: the app is uninstalled all the same.
    pub warnings: Vec<crate::foundation::error::HostError>,
}

fn rollback(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AppId = args("rollback", raw)?;
    answer(lifecycle::rollback(&session.data, &a.app_id)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AuditArgs")]
pub(crate) struct Audit {
    app_id: Option<String>,
    capability: Option<String>,
    decision: Option<String>,
    limit: Option<usize>,
    before: Option<i64>,
}

fn audit(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Audit = args("audit", raw)?;
    answer(diagnostics::audit(
        &session.data,
        &AuditQuery {
            app: a.app_id,
            capability: a.capability,
            decision: a.decision,
            limit: a.limit.unwrap_or(0),
            before: a.before,
        },
    )?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "VerifyStoreArgs")]
pub(crate) struct Verify {
    #[serde(default)]
    quick: bool,
}

fn verify_store(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Verify = args("verify_store", raw)?;
    answer(diagnostics::verify_store(&session.data, a.quick)?)
}

fn diagnostics_bundle(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("diagnostics_bundle", raw)?;
    let live = LiveDiagnostics {
        bridge: session.with_bridge(|host, _| host.diagnostics())?,
        serve_refusals: session.serve_refusals(),
    };
    answer(diagnostics::diagnostics_bundle(&session.data, &live)?)
}

fn trusted_keys(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("trusted_keys", raw)?;
    answer(settings::trusted_keys(&session.data)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AddTrustedKeyArgs")]
pub(crate) struct AddKey {
    public_key: String,
    label: Option<String>,
}

fn add_trusted_key(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AddKey = args("add_trusted_key", raw)?;
    answer(settings::add_trusted_key(
        &session.data,
        &a.public_key,
        a.label.as_deref(),
    )?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "RemoveTrustedKeyArgs")]
pub(crate) struct KeyId {
    key_id: String,
}

fn remove_trusted_key(session: &Session, raw: Value) -> HostResult<Value> {
    let a: KeyId = args("remove_trusted_key", raw)?;
    answer(settings::remove_trusted_key(&session.data, &a.key_id)?)
}

fn host_settings(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("host_settings", raw)?;
    answer(settings::host_settings(&session.data)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "SetThemeArgs")]
pub(crate) struct Theme {
    theme: String,
    /// What the page shows now (`light` or `dark`): only the page knows the system's preference.
    #[serde(default)]
    effective: Option<String>,
}

/// `set_theme {theme, effective?}` → `{theme, outgoing}`: keeps the choice, and when the page says
/// what it shows, tells every ready frame (`theme:update`) through the returned `outgoing`.
fn set_theme(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Theme = args("set_theme", raw)?;
    if let Some(effective) = a.effective.as_deref() {
        if effective != "light" && effective != "dark" {
            return Err(crate::foundation::error::HostError::new(
                crate::foundation::error::ErrorCode::ApiBadArguments,
                format!("set_theme: effective must be light or dark (not {effective:?})"),
            ));
        }
    }
    let theme = settings::set_theme(&session.data, &a.theme)?;
    let outgoing = match a.effective {
        Some(effective) => session.with_bridge(|bridge, _| {
            let mut env = bridge.environment().clone();
            if env.theme_mode == theme && env.effective_theme_mode == effective {
                return Vec::new();
            }
            env.theme_mode = theme.clone();
            env.effective_theme_mode = effective;
            bridge.set_environment(env)
        })?,
        None => Vec::new(),
    };
    answer(ThemeSet { theme, outgoing })
}

/// What `set_theme` answers: the stored choice and the `theme:update` posts to carry out.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ThemeSet {
    pub theme: String,
    pub outgoing: Vec<crate::hosting::bridge::host::Outgoing>,
}

fn dev_status(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("dev_status", raw)?;
    answer(dev::dev_status(&session.data)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "DevConsentArgs")]
pub(crate) struct DevConsent {
    app_id: String,
    digest: String,
    consent: bool,
}

/// `dev_consent {appId, digest, consent: true}` → `DevStatus`: installs the change a dev app
/// holds if it is still the one shown (`dev.consent_stale` otherwise).
fn dev_consent(session: &Session, raw: Value) -> HostResult<Value> {
    let a: DevConsent = args("dev_consent", raw)?;
    if !a.consent {
        return Err(crate::foundation::error::HostError::new(
            crate::foundation::error::ErrorCode::InstallConsentRequired,
            "dev_consent needs consent: true",
        ));
    }
    answer(dev::dev_consent(&session.data, &a.app_id, &a.digest)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "BindSecretArgs")]
pub(crate) struct BindSecret {
    app_id: String,
    slot: String,
    value: String,
}

/// `bind_secret {appId, slot, value}` → `{appId, slot, store, boundAt}`: the card's "Bind secret"
/// setup action, as `apphost secrets set` does it (the value goes to the secret store; no
/// answer carries it or its ref).
fn bind_secret(session: &Session, raw: Value) -> HostResult<Value> {
    let a: BindSecret = args("bind_secret", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    let value = crate::install::secrets::SecretValue::new(a.value);
    let binding = crate::hosting::app_secrets::set(&store, &a.app_id, &a.slot, &value)?;
    let backend = binding
        .stored_as
        .split(':')
        .next()
        .unwrap_or("secret store")
        .to_owned();
    answer(SecretBound {
        app_id: a.app_id,
        slot: a.slot,
        store: backend,
        bound_at: binding.bound_at,
    })
}

/// What `bind_secret` answers: never the value or its ref.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretBound {
    pub app_id: String,
    pub slot: String,
    /// The secret store's kind (`keyring`, `encrypted-file`, ...).
    pub store: String,
    pub bound_at: String,
}
