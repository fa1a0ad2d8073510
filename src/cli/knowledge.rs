//! `apphost knowledge bind|unbind|search|status|reindex`: the folders bound to the knowledge
//! templates an app declares, and their local indexes (host-core's `app_knowledge`).

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;

use super::output;
use super::store_open::open_locked;
use host_core::foundation::error::HostResult;
use host_core::foundation::paths::DataDir;
use host_core::hosting::app_knowledge::{self, Indexed};
use host_core::install::store::Store;

#[derive(Debug, Subcommand)]
pub enum KnowledgeCommand {
    /// Bind a folder to a knowledge template the app declares, and index it.
    Bind {
        app: String,
        template: String,
        folder: PathBuf,
    },
    /// Remove a template's binding and its index.
    Unbind { app: String, template: String },
    /// Search a bound template (words only), best first, with citations.
    Search {
        app: String,
        template: String,
        query: String,
        /// Hits to show (1-50).
        #[arg(long, default_value_t = 5)]
        top_k: usize,
    },
    /// Every binding (or one app's): folder, files, chunks, last indexed, problems.
    Status { app: Option<String> },
    /// Re-index a bound template from its folder now.
    Reindex { app: String, template: String },
}

pub fn run(dir: &DataDir, cmd: KnowledgeCommand, json: bool) -> HostResult<i32> {
    match cmd {
        KnowledgeCommand::Bind {
            app,
            template,
            folder,
        } => {
            let folder = if folder.is_relative() {
                std::env::current_dir()
                    .map(|d| d.join(&folder))
                    .unwrap_or(folder)
            } else {
                folder
            };
            let store = open_locked(dir, json)?;
            let done = app_knowledge::bind(&store, &app, &template, &folder)?;
            indexed(json, "bound", &done);
            Ok(0)
        }
        KnowledgeCommand::Unbind { app, template } => {
            let store = open_locked(dir, json)?;
            app_knowledge::unbind(&store, &app, &template)?;
            output::done(
                json,
                &format!("unbound knowledge template {template} of {app}"),
                &json!({"app": app, "template": template, "bound": false}),
            );
            Ok(0)
        }
        KnowledgeCommand::Search {
            app,
            template,
            query,
            top_k,
        } => {
            if !(1..=runtime_core::knowledge::MAX_TOP_K).contains(&top_k) {
                return Err(host_core::HostError::new(
                    host_core::ErrorCode::KnowledgeQueryInvalid,
                    "--top-k must be 1-50",
                ));
            }
            let store = Store::open(dir)?;
            let active = store.active_app(&app)?;
            let hits =
                app_knowledge::search(&store, &active.manifest, &app, &template, &query, top_k)?;
            if json {
                output::print_json(&json!({"app": app, "template": template, "hits": hits}));
            } else if hits.is_empty() {
                out_line!("no hits");
            } else {
                for h in &hits {
                    out_line!(
                        "{:.3}  {} § {} [{}..{}]\n       {}",
                        h.score,
                        h.document,
                        if h.section.is_empty() {
                            "-"
                        } else {
                            &h.section
                        },
                        h.start,
                        h.end,
                        h.snippet.replace('\n', " ")
                    );
                }
            }
            Ok(0)
        }
        KnowledgeCommand::Status { app } => {
            let store = Store::open(dir)?;
            let all = app_knowledge::status(&store, app.as_deref())?;
            if json {
                output::print_json(&all);
            } else if all.is_empty() {
                out_line!("no knowledge bindings");
            } else {
                for s in &all {
                    out_line!(
                        "{}/{}  {}  {} files, {} chunks, last indexed {}{}{}",
                        s.app,
                        s.template,
                        s.folder,
                        s.index.files,
                        s.index.chunks,
                        s.index.last_indexed.as_deref().unwrap_or("never"),
                        if s.index.problems.is_empty() {
                            String::new()
                        } else {
                            format!(
                                ", {} problems",
                                s.index.problems.len() + s.index.problems_dropped
                            )
                        },
                        s.error
                            .as_deref()
                            .map(|e| format!(" (error: {e})"))
                            .unwrap_or_default()
                    );
                    for p in &s.index.problems {
                        out_line!("    {} {}: {}", p.code, p.path, p.message);
                    }
                }
            }
            Ok(0)
        }
        KnowledgeCommand::Reindex { app, template } => {
            let store = Store::open(dir)?;
            let done = app_knowledge::reindex(&store, &app, &template)?;
            indexed(json, "re-indexed", &done);
            Ok(0)
        }
    }
}

fn indexed(json: bool, verb: &str, d: &Indexed) {
    let r = &d.report;
    output::done(
        json,
        &format!(
            "{verb} {} of {} to {}: {} files ({} read, {} unchanged, {} removed), {} chunks, {} problems",
            d.template,
            d.app,
            d.folder,
            r.files,
            r.indexed,
            r.unchanged,
            r.removed,
            r.chunks,
            r.problems.len() + r.problems_dropped
        ),
        &serde_json::to_value(d).unwrap_or_default(),
    );
}
