//! `lime.knowledge`: the folders a user binds to the knowledge templates an app declares
//! (`knowledgeTemplates[]`), and the per-template index RuntimeCore keeps of each
//! (`runtime_core::knowledge`, in the app's data area).
//!
//! A binding is a `settings` row (`store::KnowledgeBinding`, audited). Binding indexes the
//! folder first and records the row only when that worked, so a refused bind leaves no binding
//! (and removes the index it created). Every check is re-derived where it is enforced: the
//! template must be declared by the app's *active* manifest and bound, on each search.

use std::path::{Path, PathBuf};

use runtime_core::app_area::AppArea;
use runtime_core::knowledge::{self, Hit, IndexReport, KnowledgeError, KnowledgeIndex, Limits};
use serde::Serialize;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::manifest::{Key, Manifest};
use crate::install::store::{KnowledgeBinding, Store};

/// The keys of the `knowledgeTemplates[]` items of a manifest, in manifest order (first wins).
pub fn declared_templates(m: &Manifest) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in m.view().items(Key::KnowledgeTemplates) {
        if let Some(k) = t.key() {
            if !out.iter().any(|o| o == k) {
                out.push(k.to_owned());
            }
        }
    }
    out
}

fn not_declared(app: &str, template: &str) -> HostError {
    HostError::new(
        ErrorCode::KnowledgeTemplateNotDeclared,
        format!("{app} declares no knowledge template {template:?}"),
    )
    .with("app", app)
    .with("template", template)
}

fn not_bound(app: &str, template: &str) -> HostError {
    HostError::new(
        ErrorCode::KnowledgeNotBound,
        format!("no folder is bound to {app}'s knowledge template {template:?} (apphost knowledge bind {app} {template} <folder>)"),
    )
    .with("app", app)
    .with("template", template)
}

/// A RuntimeCore index error as a host error.
pub fn index_error(e: KnowledgeError) -> HostError {
    let code = match &e {
        KnowledgeError::QueryInvalid(_) => ErrorCode::KnowledgeQueryInvalid,
        KnowledgeError::FolderInvalid(_) => ErrorCode::KnowledgeFolderInvalid,
        KnowledgeError::Io(_) | KnowledgeError::Sqlite(_) => ErrorCode::KnowledgeIndexFailed,
    };
    HostError::new(code, e.to_string())
}

/// Checks that `app`'s active manifest declares `template`; returns the active version.
pub fn check_template(store: &Store, app: &str, template: &str) -> HostResult<String> {
    let active = store.active_app(app)?;
    if !declared_templates(&active.manifest)
        .iter()
        .any(|t| t == template)
    {
        return Err(not_declared(app, template));
    }
    Ok(active.version)
}

fn area(store: &Store, app: &str) -> HostResult<AppArea> {
    let dir = store.data_dir().apps_data().join(app);
    AppArea::open(&dir).map_err(|e| index_error(e.into()))
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// What a bind or reindex did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Indexed {
    pub app: String,
    pub template: String,
    pub folder: String,
    pub report: IndexReport,
}

/// Binds `folder` to `template` of `app` (the store must be locked): the folder is indexed,
/// then the binding recorded. A folder that is not an absolute path to a directory is
/// `knowledge.folder_invalid` and nothing is recorded.
pub fn bind(store: &Store, app: &str, template: &str, folder: &Path) -> HostResult<Indexed> {
    let version = check_template(store, app, template)?;
    let folder = resolve_folder(folder)?;
    let had_binding = store
        .knowledge_bindings(app)?
        .iter()
        .any(|b| b.template == template);
    let area = area(store, app)?;
    let report = (|| {
        let mut index = KnowledgeIndex::open(&area, template)?;
        index.reindex(&folder, &Limits::default(), &now())
    })();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            if !had_binding {
                let _ = KnowledgeIndex::remove(&area, template);
            }
            return Err(index_error(e));
        }
    };
    let folder = folder.display().to_string();
    store.bind_knowledge(
        app,
        &version,
        &KnowledgeBinding {
            template: template.to_owned(),
            folder: folder.clone(),
            bound_at: now(),
        },
    )?;
    Ok(Indexed {
        app: app.to_owned(),
        template: template.to_owned(),
        folder,
        report,
    })
}

/// The folder as bound: absolute, resolved (the root may be a link the user chose; nothing
/// below it is followed), a directory.
fn resolve_folder(folder: &Path) -> HostResult<PathBuf> {
    let invalid = |why: String| {
        HostError::new(ErrorCode::KnowledgeFolderInvalid, why)
            .with("folder", folder.display().to_string())
    };
    if !folder.is_absolute() {
        return Err(invalid(format!(
            "{} is not an absolute path",
            folder.display()
        )));
    }
    let resolved =
        std::fs::canonicalize(folder).map_err(|e| invalid(format!("{}: {e}", folder.display())))?;
    if !resolved.is_dir() {
        return Err(invalid(format!("{} is not a folder", folder.display())));
    }
    Ok(resolved)
}

/// Removes the binding of `template` and its index (the store must be locked). A template an
/// update stopped declaring can still be unbound while it is bound.
pub fn unbind(store: &Store, app: &str, template: &str) -> HostResult<KnowledgeBinding> {
    let bound = store
        .knowledge_bindings(app)?
        .into_iter()
        .any(|b| b.template == template);
    if !bound {
        check_template(store, app, template)?;
        return Err(not_bound(app, template));
    }
    let version = store.active_app(app).ok().map(|a| a.version);
    let removed = store
        .unbind_knowledge(app, version.as_deref(), template)?
        .ok_or_else(|| not_bound(app, template))?;
    if let Some(area) = AppArea::open_existing(&store.data_dir().apps_data().join(app))
        .map_err(|e| index_error(e.into()))?
    {
        KnowledgeIndex::remove(&area, template).map_err(|e| index_error(e.into()))?;
    }
    Ok(removed)
}

/// The binding of a declared template, or why there is none.
pub fn binding(store: &Store, app: &str, template: &str) -> HostResult<KnowledgeBinding> {
    check_template(store, app, template)?;
    store
        .knowledge_bindings(app)?
        .into_iter()
        .find(|b| b.template == template)
        .ok_or_else(|| not_bound(app, template))
}

/// Re-indexes a bound template from its folder.
pub fn reindex(store: &Store, app: &str, template: &str) -> HostResult<Indexed> {
    let b = binding(store, app, template)?;
    let area = area(store, app)?;
    let mut index = KnowledgeIndex::open(&area, template).map_err(index_error)?;
    let report = index
        .reindex(Path::new(&b.folder), &Limits::default(), &now())
        .map_err(index_error)?;
    Ok(Indexed {
        app: app.to_owned(),
        template: template.to_owned(),
        folder: b.folder,
        report,
    })
}

/// Checks a search of `template` by `app` as declared by `manifest` (the caller's trusted view
/// of the app: the active manifest, or the `Allowed` proof's): declared, bound, and a query of
/// terms. Returns the binding.
pub fn check_search(
    store: &Store,
    manifest: &Manifest,
    app: &str,
    template: &str,
    query: &str,
) -> HostResult<KnowledgeBinding> {
    if !declared_templates(manifest).iter().any(|t| t == template) {
        return Err(not_declared(app, template));
    }
    let b = store
        .knowledge_bindings(app)?
        .into_iter()
        .find(|b| b.template == template)
        .ok_or_else(|| not_bound(app, template))?;
    knowledge::query::fts_expression(query)
        .map_err(|e| index_error(KnowledgeError::QueryInvalid(e.0)))?;
    Ok(b)
}

/// Opens the index of a bound template for searching; an index missing from the data area
/// (deleted with the data, a fresh data area) is built from the bound folder first.
pub fn open_index(store: &Store, app: &str, b: &KnowledgeBinding) -> HostResult<KnowledgeIndex> {
    let area = area(store, app)?;
    match KnowledgeIndex::open_existing(&area, &b.template).map_err(index_error)? {
        Some(i) => Ok(i),
        None => {
            let mut i = KnowledgeIndex::open(&area, &b.template).map_err(index_error)?;
            i.reindex(Path::new(&b.folder), &Limits::default(), &now())
                .map_err(index_error)?;
            Ok(i)
        }
    }
}

/// [`check_search`], [`open_index`], then the search.
pub fn search(
    store: &Store,
    manifest: &Manifest,
    app: &str,
    template: &str,
    query: &str,
    top_k: usize,
) -> HostResult<Vec<Hit>> {
    let b = check_search(store, manifest, app, template, query)?;
    open_index(store, app, &b)?
        .search(query, top_k)
        .map_err(index_error)
}

/// One binding's state (`apphost knowledge status`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingStatus {
    pub app: String,
    pub template: String,
    pub folder: String,
    pub bound_at: String,
    /// The template is still declared by the app's active manifest.
    pub declared: bool,
    #[serde(flatten)]
    pub index: knowledge::Status,
    /// Why the index could not be read, if it could not.
    pub error: Option<String>,
}

/// Every binding (of `app`, or of every app) with its index's state.
pub fn status(store: &Store, app: Option<&str>) -> HostResult<Vec<BindingStatus>> {
    let all = match app {
        Some(a) => store
            .knowledge_bindings(a)?
            .into_iter()
            .map(|b| (a.to_owned(), b))
            .collect(),
        None => store.all_knowledge_bindings()?,
    };
    let mut out = Vec::new();
    for (app, b) in all {
        let declared = store
            .active_app(&app)
            .map(|a| declared_templates(&a.manifest).contains(&b.template))
            .unwrap_or(false);
        let (index, error) = match AppArea::open_existing(&store.data_dir().apps_data().join(&app))
            .map_err(KnowledgeError::from)
            .and_then(|a| match a {
                Some(a) => KnowledgeIndex::open_existing(&a, &b.template),
                None => Ok(None),
            })
            .and_then(|i| i.map(|i| i.status()).transpose())
        {
            Ok(s) => (s.unwrap_or_default(), None),
            Err(e) => (knowledge::Status::default(), Some(e.to_string())),
        };
        out.push(BindingStatus {
            app,
            template: b.template,
            folder: b.folder,
            bound_at: b.bound_at,
            declared,
            index,
            error,
        });
    }
    Ok(out)
}
