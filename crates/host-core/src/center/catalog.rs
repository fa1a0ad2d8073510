//! The app center's side of remote catalogs (issue 22 §2, `docs/catalog.md` "App center"):
//! what the Browse page shows (catalog apps with publisher, trust, permissions and a readiness
//! preview; per installed app the offered update with its permission diff, the channel it
//! follows, whether its release is revoked) and the catalog install, which downloads a release
//! and hands it to the SAME review and consent as a local package (`center/review.rs`).
//!
//! Browsing reads only the verified metadata kept on disk (no network); `refresh` is the one
//! call that goes out. Nothing here writes `host.db` except the consented install: a stale,
//! unreachable or garbage catalog never changes an installed app.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::catalog_download::KeptDownload;
use super::review::KeptSource;
use super::{Center, InstallReview};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::install::compat::{
    parse_version, provided_sdk_versions, sdk_fit, split_package_spec, Range, SdkFit,
};
use crate::install::remote::catalogs::{self, CatalogInfo};
use crate::install::remote::releases::{self, Release, Wanted, STABLE};
use crate::install::remote::state::{self, Followed};
use crate::install::remote::trusted::{first_expired, verify_state};
use crate::install::store::{Signer, Store};

/// Most catalog apps one `browse_catalog` answers (the rest: narrow the search).
pub const MAX_BROWSE_APPS: usize = 500;

/// What `browse_catalog` answers: every catalog's freshness and the apps they offer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Browse {
    pub catalogs: Vec<CatalogInfo>,
    pub apps: Vec<BrowseApp>,
    /// More apps matched than [`MAX_BROWSE_APPS`].
    pub truncated: bool,
}

/// One catalog app as a Browse card shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrowseApp {
    pub catalog: String,
    pub app_id: String,
    pub display_name: String,
    pub description: String,
    pub publisher: Option<String>,
    /// `pinned` (signed by a key this host trusts and, for an installed app, by the publisher
    /// key pinned for it), `signed` (signed by another key: the review shows it as a sideload),
    /// `unknown` (unsigned) or `changed` (the app is installed with a pinned publisher key and
    /// this release is signed by another key or unsigned: installing it needs the user's
    /// explicit acceptance of the new publisher, `install.publisher_changed` without it).
    pub trust: &'static str,
    /// The permission keys the offered release declares.
    pub permissions: Vec<String>,
    pub readiness: ReadinessPreview,
    /// The release Install gets (the newest not revoked of the followed or `stable` channel;
    /// null when every release of that channel is revoked).
    pub offered: Option<ReleaseRow>,
    /// Every release, newest first.
    pub releases: Vec<ReleaseRow>,
    pub channels: Vec<String>,
    /// The catalog's metadata is expired or its last refresh failed: nothing can be installed
    /// from it until a refresh passes (installed apps are not affected).
    pub stale: bool,
    pub installed: Option<InstalledState>,
}

/// One release of a catalog app.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRow {
    pub version: String,
    pub channel: String,
    /// The publisher's reason when the release is revoked (it cannot be installed).
    pub revoked: Option<String>,
    pub rollback_target: Option<String>,
}

/// What the compatibility a release declares means on this host, before download.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessPreview {
    /// `compatible`, `incompatible` or `unknown` (the full readiness is in the review sheet).
    pub status: &'static str,
    pub reasons: Vec<String>,
}

/// The installed app behind a catalog card.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstalledState {
    pub version: String,
    /// The version "Roll back" returns to.
    pub previous_version: Option<String>,
    /// The installed app's own readiness (never changed by a catalog).
    pub readiness: String,
    /// The channel the app follows (`stable` when it was installed otherwise).
    pub channel: String,
    /// Whether the app was installed from this catalog (it follows it for updates).
    pub follows: bool,
    /// The publisher's reason when the installed version is revoked in this catalog.
    pub revoked: Option<String>,
    /// The signer of the offered (or shown) release against the publisher pinned for the
    /// installed app, as the install review will judge it: `same`, `signed` (the installed
    /// versions are unsigned), `changed` (another key, or unsigned over signed) or `unknown`
    /// (no publisher recorded). `changed`/`unknown` need the user's acceptance at install.
    pub publisher: &'static str,
    pub update: Option<UpdateOffer>,
}

/// A newer release of the followed channel.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOffer {
    pub version: String,
    pub channel: String,
    /// Permission keys the new version declares and the installed one does not.
    pub permissions_added: Vec<String>,
    /// Permission keys the installed version declares and the new one does not.
    pub permissions_removed: Vec<String>,
    /// The new version is not signed by the installed app's pinned publisher key (see
    /// [`InstalledState::publisher`]): the review asks to accept a publisher change.
    pub publisher_changed: bool,
}

/// The trust of a release's signature as the Browse page shows it.
fn trust_of(release: &Release, trusted: &BTreeSet<String>) -> &'static str {
    match release
        .signature
        .as_ref()
        .and_then(|s| s.public_key.as_ref())
    {
        Some(pk) if trusted.contains(&pk.to_ascii_lowercase()) => "pinned",
        Some(_) => "signed",
        None => "unknown",
    }
}

/// The release's signer against the publisher pinned for the installed app: the same rule as
/// the install plan (`Signer::same_as`: the full key, or both unsigned), re-derived by the
/// install itself whatever this says.
fn publisher_status(pin: Option<&Signer>, release: &Release) -> &'static str {
    let new = release
        .signature
        .as_ref()
        .and_then(|s| s.public_key.as_deref());
    let Some(pin) = pin else { return "unknown" };
    match (pin.public_key.as_deref(), new) {
        (Some(old), Some(new)) if old == new => "same",
        _ if !pin.is_signed() && new.is_none() => "same",
        _ if !pin.is_signed() => "signed",
        _ => "changed",
    }
}

fn needs_acceptance(status: &str) -> bool {
    matches!(status, "changed" | "unknown")
}

/// The compatibility a release declares (`requires`) against this host, without the package.
pub fn readiness_preview(compat: &serde_json::Value, profile: &HostProfile) -> ReadinessPreview {
    let mut blocked = Vec::new();
    let mut unknown = Vec::new();
    let check = |range: &str, have: &str, what: &str, out: &mut Vec<String>| match (
        Range::parse(range),
        parse_version(have),
    ) {
        (Ok(r), Some(v)) if r.matches(&v) => {}
        _ => out.push(format!("{what} is {have}; the app needs {range}")),
    };
    if let Some(lime) = compat.get("lime").and_then(serde_json::Value::as_object) {
        for (name, range) in lime {
            let range = range.as_str().unwrap_or_default();
            match name.as_str() {
                "appRuntime" | "runtime" => check(
                    range,
                    &profile.app_runtime_version,
                    "the host runtime",
                    &mut blocked,
                ),
                "host" | "desktop" | "apphost" => {
                    check(range, &profile.host_version, "AppHost", &mut blocked)
                }
                other => unknown.push(format!("requires.lime.{other} is not known to AppHost")),
            }
        }
    }
    if let Some(sdk) = compat.get("sdk").and_then(serde_json::Value::as_str) {
        let (pkg, range) = split_package_spec(sdk);
        if pkg == profile.sdk_package {
            let provided = provided_sdk_versions(&profile.sdk_version);
            match Range::parse(range).map(|r| sdk_fit(&r, &provided)) {
                Ok(SdkFit::Provided(_)) => {}
                _ => blocked.push(format!(
                    "the app needs SDK {range}; AppHost provides {}",
                    provided
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        } else {
            blocked.push(format!(
                "the app needs SDK {pkg}; AppHost provides {}",
                profile.sdk_package
            ));
        }
    }
    let status = if !blocked.is_empty() {
        "incompatible"
    } else if !unknown.is_empty() {
        "unknown"
    } else {
        "compatible"
    };
    blocked.extend(unknown);
    ReadinessPreview {
        status,
        reasons: blocked,
    }
}

/// The newest release of `channel` that is not revoked.
fn best_in<'a>(of_app: &[&'a Release], channel: &str) -> Option<&'a Release> {
    of_app
        .iter()
        .copied()
        .filter(|r| r.channel == channel && r.revoked.is_none())
        .max_by(|a, b| releases::version_cmp(&a.version, &b.version))
}

fn row(r: &Release) -> ReleaseRow {
    ReleaseRow {
        version: r.version.clone(),
        channel: r.channel.clone(),
        revoked: r.revoked.as_ref().map(|x| x.reason.clone()),
        rollback_target: r.rollback_target.clone(),
    }
}

fn diff(new: &[String], old: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let new: BTreeSet<&String> = new.iter().collect();
    let added = new
        .iter()
        .filter(|k| !old.contains(k.as_str()))
        .map(|k| (*k).clone())
        .collect();
    let removed = old.iter().filter(|k| !new.contains(k)).cloned().collect();
    (added, removed)
}

/// What the host knows of one installed app, for its cards.
struct Local {
    version: String,
    previous: Option<String>,
    readiness: String,
    permissions: BTreeSet<String>,
    /// The publisher pinned for it (`None`: none recorded).
    pin: Option<Signer>,
}

fn installed_apps(dir: &DataDir) -> HostResult<BTreeMap<String, Local>> {
    let store = Store::open(dir)?;
    let mut out = BTreeMap::new();
    for s in store.list_apps()? {
        let permissions = store
            .active_app(&s.name)
            .map(|a| {
                a.manifest
                    .view()
                    .permissions()
                    .filter_map(|p| p.key().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        out.insert(
            s.name.clone(),
            Local {
                version: s.active_version,
                previous: s.previous_version,
                readiness: s.readiness,
                permissions,
                pin: store.publisher_pin(&s.name)?,
            },
        );
    }
    Ok(out)
}

/// The Browse page: every catalog's freshness and the apps of their verified metadata whose
/// id, name, description or publisher contains `text` (empty: all). No network.
pub fn browse(dir: &DataDir, text: &str, now: jiff::Timestamp) -> HostResult<Browse> {
    let infos = catalogs::list(dir, now)?;
    let installed = installed_apps(dir)?;
    let followed = state::followed(dir)?;
    let trusted: BTreeSet<String> = Store::open(dir)?
        .trusted_keys()?
        .into_iter()
        .map(|k| k.public_key.to_ascii_lowercase())
        .collect();
    let profile = HostProfile::current();
    let needle = text.to_lowercase();
    let mut apps = Vec::new();
    let mut truncated = false;
    for info in &infos {
        let Ok(v) = state::load(dir, &info.name).and_then(|s| verify_state(&s)) else {
            continue;
        };
        let stale = info.stale || first_expired(&v, now).is_some();
        let mut ids: Vec<&str> = v.releases.iter().map(|r| r.app_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let mut of_app: Vec<&Release> = v.releases.iter().filter(|r| r.app_id == id).collect();
            of_app.sort_by(|a, b| releases::version_cmp(&b.version, &a.version));
            let follow = followed.get(id).filter(|f| f.catalog == info.name);
            let channel = follow.map_or(STABLE, |f| f.channel.as_str());
            let offered = best_in(&of_app, channel);
            let Some(shown) = offered.or_else(|| of_app.first().copied()) else {
                continue;
            };
            let hay = [
                Some(id),
                shown.display_name.as_deref(),
                shown.description.as_deref(),
                shown.publisher.as_deref(),
            ];
            if !needle.is_empty()
                && !hay
                    .iter()
                    .flatten()
                    .any(|h| h.to_lowercase().contains(&needle))
            {
                continue;
            }
            if apps.len() == MAX_BROWSE_APPS {
                truncated = true;
                break;
            }
            let mut channels: Vec<String> = of_app.iter().map(|r| r.channel.clone()).collect();
            channels.sort();
            channels.dedup();
            let publisher = installed
                .get(id)
                .map(|local| publisher_status(local.pin.as_ref(), shown));
            let installed = installed.get(id).map(|local| {
                let update = offered
                    .filter(|o| {
                        releases::version_cmp(&o.version, &local.version)
                            == std::cmp::Ordering::Greater
                    })
                    .map(|o| {
                        let (added, removed) = diff(&o.permissions, &local.permissions);
                        UpdateOffer {
                            version: o.version.clone(),
                            channel: o.channel.clone(),
                            permissions_added: added,
                            permissions_removed: removed,
                            publisher_changed: needs_acceptance(publisher_status(
                                local.pin.as_ref(),
                                o,
                            )),
                        }
                    });
                InstalledState {
                    version: local.version.clone(),
                    previous_version: local.previous.clone(),
                    readiness: local.readiness.clone(),
                    channel: channel.to_owned(),
                    follows: follow.is_some(),
                    revoked: of_app
                        .iter()
                        .find(|r| r.version == local.version)
                        .and_then(|r| r.revoked.as_ref().map(|x| x.reason.clone())),
                    publisher: publisher.unwrap_or("unknown"),
                    update,
                }
            });
            apps.push(BrowseApp {
                catalog: info.name.clone(),
                app_id: id.to_owned(),
                display_name: shown.display_name.clone().unwrap_or_else(|| id.to_owned()),
                description: shown.description.clone().unwrap_or_default(),
                publisher: shown.publisher.clone(),
                trust: match publisher {
                    Some("changed") => "changed",
                    _ => trust_of(shown, &trusted),
                },
                permissions: shown.permissions.clone(),
                readiness: readiness_preview(&shown.compatibility, &profile),
                offered: offered.map(row),
                releases: of_app.iter().map(|r| row(r)).collect(),
                channels,
                stale,
                installed,
            });
        }
    }
    Ok(Browse {
        catalogs: infos,
        apps,
        truncated,
    })
}

/// Makes an installed app follow `channel` of `catalog` for its updates. The channel must be
/// one the catalog's verified metadata has for the app (`catalog.release_not_found`).
pub fn set_channel(dir: &DataDir, app: &str, catalog: &str, channel: &str) -> HostResult<()> {
    let installed = Store::open(dir)?
        .list_apps()?
        .into_iter()
        .any(|s| s.name == app);
    if !installed {
        return Err(HostError::new(
            ErrorCode::AppNotInstalled,
            format!("{app} is not installed"),
        )
        .with("app", app));
    }
    let v = verify_state(&state::load(dir, catalog)?)?;
    if !v
        .releases
        .iter()
        .any(|r| r.app_id == app && r.channel == channel)
    {
        return Err(HostError::new(
            ErrorCode::CatalogReleaseNotFound,
            format!("catalog {catalog} has no channel {channel} for {app}"),
        )
        .with("app", app)
        .with("channel", channel));
    }
    state::set_followed(
        dir,
        app,
        Followed {
            catalog: catalog.to_owned(),
            channel: channel.to_owned(),
        },
    )
}

impl Center {
    /// Refreshes the catalog (or every one), picks the release `wanted` names, downloads it
    /// (hash checked while streaming; `download` gets (bytes, signed length) as it comes) and
    /// reviews it like a local package (`progress`: bytes verified): nothing is installed until `install` gets this
    /// review's id with consent.
    pub fn review_catalog_release(
        &self,
        wanted: &Wanted,
        catalog: Option<&str>,
        progress_id: Option<&str>,
        download: &mut dyn FnMut(u64, u64),
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<InstallReview> {
        // `cancel_review {reviewId: <progress_id>}` stops the transfer (the partial file is
        // removed: `catalog.download_cancelled`).
        let tracked = self.downloads.track(progress_id);
        let fetched = catalogs::fetch_release(
            &self.dir,
            wanted,
            catalog,
            catalogs::now(),
            &mut |done, total| {
                download(done, total);
                tracked.go_on()
            },
        )?;
        drop(tracked);
        if fetched.release.app_id != wanted.app {
            return Err(HostError::new(
                ErrorCode::CatalogReleaseMismatch,
                "the catalog answered another app's release",
            )
            .with("app", wanted.app.clone()));
        }
        let channel = wanted.channel.clone();
        self.review_kept(
            KeptSource::Catalog(Box::new(KeptDownload { fetched, channel })),
            progress,
        )
    }
}
