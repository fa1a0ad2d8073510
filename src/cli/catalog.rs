//! `apphost catalog ...` and the arguments of `apphost update` (remote catalogs: host-core
//! `install::remote`); installing by app id is `catalog_install`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::output;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::InspectOptions;
use host_core::install::remote::catalogs::{self, now, CatalogInfo};
use host_core::install::remote::publish::{self, Expiries, Keys};
use host_core::install::signature;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Add a catalog: pins its root metadata (a root.json you got from the publisher out of
    /// band) and fetches its metadata once; nothing is kept if that fails.
    Add {
        name: String,
        /// The catalog's base URL (https; plain http only for loopback hosts).
        url: String,
        /// The trusted root metadata to pin.
        #[arg(long, value_name = "ROOT_JSON")]
        root: PathBuf,
    },
    /// Fetch and verify the newest metadata of every catalog (or the one named).
    Refresh { name: Option<String> },
    /// List the catalogs, their versions, and whether they are stale (and since when).
    List,
    /// Search the apps of every catalog (by id, name, description or publisher).
    Search { text: Option<String> },
    /// Forget a catalog (installed apps stay).
    Remove { name: String },
    /// Publisher side: build a signed catalog repository from a folder of package zips.
    Build {
        /// A folder of package .zip files (optional `<zip>.release.json` beside each: channel,
        /// rollbackTarget, revoked).
        packages: PathBuf,
        /// A secret key file (`apphost keygen`); signs every role (a dev setup).
        #[arg(long)]
        key: PathBuf,
        /// How long the metadata stays valid, e.g. 30d, 12h (default: root 365d, targets and
        /// snapshot 90d, timestamp 7d).
        #[arg(long, value_name = "DURATION")]
        expires: Option<String>,
        /// The repository folder to write (built again in place: every version bumps).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Args, Clone)]
pub struct UpdateArgs {
    /// A package folder, .zip or catalog .json; or an installed app's id, updated from its
    /// remote catalog.
    pub source: Option<PathBuf>,
    /// Update every app installed from a remote catalog to the newest release of its channel.
    #[arg(long, conflicts_with = "source")]
    pub all: bool,
    /// With a catalog .json: the app to pick.
    #[arg(long)]
    pub app: Option<String>,
    /// With a catalog .json: the version to pick.
    #[arg(long = "release", value_name = "VERSION")]
    pub release: Option<String>,
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[arg(long)]
    pub sideload: bool,
    #[arg(long)]
    pub accept_new_publisher: bool,
    /// With an app id or --all: switch to (and remember) this channel.
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// With an app id: the remote catalog to take it from.
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
}

/// An argument that names an app of a remote catalog rather than a path: no such file, no
/// `/`, not a `.zip` or `.json` name.
pub fn is_app_spec(arg: &Path) -> bool {
    let Some(s) = arg.to_str() else {
        return false;
    };
    !arg.exists()
        && !s.contains('/')
        && !s.ends_with(".zip")
        && !s.ends_with(".json")
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
}

pub fn run(dir: &DataDir, cmd: CatalogCommand, json: bool) -> HostResult<i32> {
    match cmd {
        CatalogCommand::Add { name, url, root } => {
            let bytes = read_small(&root, 512 * 1024)?;
            let info = catalogs::add(dir, &name, &url, &bytes, now())?;
            output::done(
                json,
                &format!(
                    "added catalog {}: {} apps, {} releases",
                    info.name, info.apps, info.releases
                ),
                &json!(info),
            );
            Ok(0)
        }
        CatalogCommand::Refresh { name } => {
            let (ok, errors) = catalogs::refresh_all(dir, name.as_deref(), now());
            if !json {
                for i in &ok {
                    out_line!("{}", info_line(i));
                }
            }
            match errors.into_iter().next() {
                Some(e) => Err(e),
                None => {
                    if json {
                        output::print_json(&json!(ok));
                    }
                    Ok(0)
                }
            }
        }
        CatalogCommand::List => {
            let all = catalogs::list(dir, now())?;
            if json {
                output::print_json(&json!(all));
            } else if all.is_empty() {
                out_line!("no catalogs: add one with `apphost catalog add <name> <url> --root <root.json>`");
            } else {
                for i in &all {
                    out_line!("{}", info_line(i));
                }
            }
            Ok(0)
        }
        CatalogCommand::Search { text } => {
            let found = catalogs::search(dir, text.as_deref().unwrap_or(""))?;
            if json {
                output::print_json(&json!(found));
            } else if found.is_empty() {
                out_line!("no app found");
            } else {
                for l in &found {
                    let r = &l.latest;
                    out_line!(
                        "{}@{}  [{}]  {}{}{}",
                        l.app_id,
                        r.version,
                        l.catalog,
                        r.display_name.as_deref().unwrap_or(""),
                        r.publisher
                            .as_deref()
                            .map(|p| format!(" — {p}"))
                            .unwrap_or_default(),
                        if r.permissions.is_empty() {
                            String::new()
                        } else {
                            format!(" (permissions: {})", r.permissions.join(", "))
                        }
                    );
                }
            }
            Ok(0)
        }
        CatalogCommand::Remove { name } => {
            catalogs::remove(dir, &name)?;
            output::done(
                json,
                &format!("removed catalog {name}"),
                &json!({"removed": name}),
            );
            Ok(0)
        }
        CatalogCommand::Build {
            packages,
            key,
            expires,
            out,
        } => build(&packages, &key, expires.as_deref(), &out, json),
    }
}

fn read_small(path: &Path, max: u64) -> HostResult<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", path, e))?;
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", path, e))?;
    if bytes.len() as u64 > max {
        return Err(HostError::new(
            ErrorCode::CatalogMetadataTooLarge,
            format!("{} is larger than {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

fn info_line(i: &CatalogInfo) -> String {
    let mut s = format!(
        "{}  {}  {} apps, {} releases, targets v{}",
        i.name,
        i.url,
        i.apps,
        i.releases,
        i.targets_version
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into())
    );
    if let Some(at) = &i.refreshed_at {
        s.push_str(&format!(", refreshed {at}"));
    }
    if i.stale {
        s.push_str(&format!(
            "  STALE since {} ({})",
            i.stale_since.as_deref().unwrap_or("?"),
            i.stale_reason.as_deref().unwrap_or("?")
        ));
    }
    s
}

fn build(
    packages: &Path,
    key: &Path,
    expires: Option<&str>,
    out: &Path,
    json: bool,
) -> HostResult<i32> {
    let doc: Value = serde_json::from_slice(&read_small(key, 64 * 1024)?)
        .map_err(|e| HostError::new(ErrorCode::KeyInvalid, format!("{}: {e}", key.display())))?;
    let key = signature::parse_secret_key(&doc)?;
    let expiries = Expiries::from_now(expires)?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let report = publish::build(packages, out, &Keys::single(&key), &expiries, &opts)?;
    output::done(
        json,
        &format!(
            "built catalog {}: {} releases, root v{}, targets v{} (pin {}/metadata/root.json)",
            out.display(),
            report.releases.len(),
            report.root_version,
            report.targets_version,
            out.display()
        ),
        &json!(report),
    );
    Ok(0)
}
