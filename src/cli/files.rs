//! `apphost files grant|list|revoke`: the `lime.files` refs of an app (host-core's
//! `hosting::user_files`), for scripts and tests; the window and `apphost serve` grant through
//! the host UI. A ref is printed, the path only to the user who granted it.

use clap::Subcommand;
use serde_json::json;

use super::output;
use host_core::foundation::error::HostResult;
use host_core::foundation::paths::DataDir;
use host_core::hosting::user_files;
use host_core::install::store::Store;

#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// Grant a file or a folder to an app; prints the opaque ref the app reads it by.
    Grant {
        app: String,
        path: std::path::PathBuf,
    },
    /// List an app's file refs (ref, kind, name, size, path).
    List { app: String },
    /// Revoke a ref: the app's next read of it is `files.ref_not_found`.
    Revoke {
        app: String,
        #[arg(value_name = "REF")]
        handle: String,
    },
}

pub fn run(dir: &DataDir, cmd: FilesCommand, json: bool) -> HostResult<i32> {
    // No store lock: a grant or revoke is one transaction, so it works while the window or
    // `apphost serve` runs.
    let store = Store::open(dir)?;
    match cmd {
        FilesCommand::Grant { app, path } => {
            let r = user_files::grant_path(&store, &app, &path)?;
            output::done(
                json,
                &format!(
                    "granted {} {} to {app} as {}",
                    r.kind.as_str(),
                    r.path,
                    r.handle
                ),
                &serde_json::to_value(&r).unwrap_or_default(),
            );
        }
        FilesCommand::List { app } => {
            store.active_app(&app)?;
            let refs = store.file_refs(&app)?;
            if json {
                output::print_json(&refs);
            } else if refs.is_empty() {
                out_line!("{app} holds no file refs");
            } else {
                for r in &refs {
                    out_line!(
                        "{}  {:<6} {:>10}  {}",
                        r.handle,
                        r.kind.as_str(),
                        r.size,
                        if r.path.is_empty() {
                            &r.display_name
                        } else {
                            &r.path
                        }
                    );
                }
            }
        }
        FilesCommand::Revoke { app, handle } => {
            let r = user_files::revoke(&store, &app, &handle)?;
            output::done(
                json,
                &format!("revoked {} ({}) of {app}", r.handle, r.display_name),
                &json!({"app": app, "ref": r.handle, "revoked": true}),
            );
        }
    }
    Ok(0)
}
