//! Remote catalogs in the app center (`docs/host-api.md` "Catalogs", `docs/catalog.md`): thin
//! adapters from JSON arguments to `crate::center::catalog` and `install::remote::catalogs`.
//! `catalog_review_install` answers an `InstallReview`: the normal `install` command (with
//! consent) installs it, exactly as for a local package.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{answer, args, Command, Session};
use crate::center::catalog;
use crate::foundation::error::{HostError, HostResult};
use crate::install::remote::catalogs::{self, now, CatalogInfo};
use crate::install::remote::releases::Wanted;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "catalog_list" => catalog_list,
    "catalog_refresh" => catalog_refresh,
    "browse_catalog" => browse_catalog,
    "catalog_review_install" => catalog_review_install,
    "catalog_set_channel" => catalog_set_channel,
}

/// Longest search text accepted (longer is cut).
const MAX_SEARCH: usize = 256;

fn catalog_list(session: &Session, raw: Value) -> HostResult<Value> {
    let _: super::NoArgs = args("catalog_list", raw)?;
    answer(catalogs::list(&session.data, now())?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "CatalogRefreshArgs")]
pub(crate) struct RefreshArgs {
    /// One catalog; absent: every catalog.
    name: Option<String>,
}

/// What `catalog_refresh` answers: every catalog afterwards, and the refusals of this refresh.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refreshed {
    pub catalogs: Vec<CatalogInfo>,
    pub errors: Vec<HostError>,
}

fn catalog_refresh(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RefreshArgs = args("catalog_refresh", raw)?;
    let at = now();
    let (_, errors) = catalogs::refresh_all(&session.data, a.name.as_deref(), at);
    answer(Refreshed {
        catalogs: catalogs::list(&session.data, at)?,
        errors,
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "BrowseCatalogArgs")]
pub(crate) struct BrowseArgs {
    #[serde(default)]
    text: String,
}

fn browse_catalog(session: &Session, raw: Value) -> HostResult<Value> {
    let a: BrowseArgs = args("browse_catalog", raw)?;
    let text: String = a.text.chars().take(MAX_SEARCH).collect();
    answer(catalog::browse(&session.data, &text, now())?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "CatalogReviewInstallArgs")]
pub(crate) struct ReviewArgs {
    app_id: String,
    /// A version; absent: the newest not revoked of `channel`.
    version: Option<String>,
    /// Absent: `stable`.
    channel: Option<String>,
    /// The catalog; absent: the one that offers the app (`catalog.ambiguous` when several).
    catalog: Option<String>,
    /// Echoed in the `install:progress` events of this review (`phase: download` while the
    /// package streams in, then `phase: review`); `cancel_review {reviewId: <progressId>}`
    /// during the download stops it (`catalog.download_cancelled`, the partial file removed).
    progress_id: Option<String>,
}

fn catalog_review_install(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ReviewArgs = args("catalog_review_install", raw)?;
    let wanted = Wanted {
        app: a.app_id,
        version: a.version,
        channel: a.channel,
    };
    // The download streams first (`phase: download`, throttled like the review's reading),
    // then the review reads the package (`phase: review`): the review sheet's bar moves for both.
    let tag = json!({"phase": "download", "progressId": a.progress_id});
    let mut download = super::center::progress(session, tag);
    let tag = json!({"phase": "review", "progressId": a.progress_id});
    let mut progress = super::center::progress(session, tag);
    answer(session.center.review_catalog_release(
        &wanted,
        a.catalog.as_deref(),
        a.progress_id.as_deref(),
        &mut download,
        &mut progress,
    )?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "CatalogSetChannelArgs")]
pub(crate) struct ChannelArgs {
    app_id: String,
    catalog: String,
    channel: String,
}

fn catalog_set_channel(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ChannelArgs = args("catalog_set_channel", raw)?;
    catalog::set_channel(&session.data, &a.app_id, &a.catalog, &a.channel)?;
    answer(catalog::browse(&session.data, "", now())?)
}
