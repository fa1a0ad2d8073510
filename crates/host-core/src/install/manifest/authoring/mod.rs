//! Authoring findings: what validates but fails once the app runs, each with what to write
//! instead. All are warnings (the package still installs), so an older package is never
//! refused for them:
//!
//! - `authoring.page_without_ui`: a `page`/`panel` entry but no `runtimePackage.ui` (the entry
//!   shows nothing);
//! - `authoring.permission_capability_undeclared`: a permission whose scope needs a capability
//!   that `requires.capabilities` does not declare (every call is `capability.not_declared`);
//! - from the UI's `.html`/`.css` files, what the frame's CSP and sandbox refuse
//!   (`surface/csp.rs`): `authoring.inline_script`, `authoring.inline_style`,
//!   `authoring.style_attribute`, `authoring.inline_handler`, `authoring.form_without_forms`,
//!   `authoring.external_url`;
//! - `authoring.scan_truncated`: the scan stopped at one of its bounds.
//!
//! The manifest is read through the typed view only. Work is bounded on hostile input: at most
//! [`Bounds::max_files`] files, the first [`Bounds::max_file_bytes`] of each, and
//! [`Bounds::max_findings`] findings.

pub mod html;

use super::{EntryKind, FrameFlag, Manifest};
use super::{Finding, Severity};
use html::{Hit, HitKind};

/// The bounds of one scan.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_files: usize,
    pub max_file_bytes: usize,
    pub max_findings: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_files: 64,
            max_file_bytes: 256 * 1024,
            max_findings: 50,
        }
    }
}

pub const PAGE_WITHOUT_UI: &str = "authoring.page_without_ui";
pub const PERMISSION_CAPABILITY_UNDECLARED: &str = "authoring.permission_capability_undeclared";
pub const INLINE_SCRIPT: &str = "authoring.inline_script";
pub const INLINE_STYLE: &str = "authoring.inline_style";
pub const STYLE_ATTRIBUTE: &str = "authoring.style_attribute";
pub const INLINE_HANDLER: &str = "authoring.inline_handler";
pub const FORM_WITHOUT_FORMS: &str = "authoring.form_without_forms";
pub const EXTERNAL_URL: &str = "authoring.external_url";
pub const SCAN_TRUNCATED: &str = "authoring.scan_truncated";

/// Every code this module reports (documented in `docs/cli.md`).
pub const CODES: [&str; 9] = [
    PAGE_WITHOUT_UI,
    PERMISSION_CAPABILITY_UNDECLARED,
    INLINE_SCRIPT,
    INLINE_STYLE,
    STYLE_ATTRIBUTE,
    INLINE_HANDLER,
    FORM_WITHOUT_FORMS,
    EXTERNAL_URL,
    SCAN_TRUNCATED,
];

fn warn(
    code: &'static str,
    path: String,
    line: Option<u32>,
    message: String,
    fix: &str,
) -> Finding {
    Finding {
        severity: Severity::Warning,
        code,
        path,
        message,
        line,
        fix: Some(fix.to_owned()),
    }
}

/// The capability each permission scope is used by: a permission of that scope is of use only
/// with the capability declared. The capability registry (`hosting::capability::registry`)
/// agrees: `crates/host-core/tests/authoring_scopes.rs`.
pub const SCOPE_CAPABILITIES: [(&str, &str); 2] =
    [("storage", "lime.storage"), ("artifact", "lime.artifacts")];

/// The findings that need only the manifest.
pub fn manifest_findings(m: &Manifest) -> Vec<Finding> {
    let view = m.view();
    let mut out = Vec::new();
    let has_ui = view.runtime_package().ui_path().is_some();
    if !has_ui {
        for (i, e) in view.entries().enumerate() {
            if matches!(e.kind(), Some(EntryKind::Page | EntryKind::Panel)) {
                out.push(warn(
                    PAGE_WITHOUT_UI,
                    format!("APP.md#/entries/{i}"),
                    None,
                    format!(
                        "entry {} is a {} but the package declares no UI (runtimePackage.ui), so it shows nothing",
                        e.key().unwrap_or("?"),
                        e.kind().map_or("page", |k| k.as_str())
                    ),
                    "add `runtimePackage: {ui: {path: ./ui, entry: index.html}}` and put the page in ui/index.html",
                ));
            }
        }
    }
    let requires = view.requires();
    for (i, p) in view.permissions().enumerate() {
        let Some(scope) = p.scope() else { continue };
        let needs = SCOPE_CAPABILITIES
            .iter()
            .filter(|(s, _)| *s == scope)
            .map(|(_, c)| *c);
        for cap in needs {
            if !requires.has_capability(cap) {
                out.push(warn(
                    PERMISSION_CAPABILITY_UNDECLARED,
                    format!("APP.md#/permissions/{i}/scope"),
                    None,
                    format!(
                        "permission {} has scope {scope}, used by {cap}, but requires.capabilities does not declare {cap}: every {cap} call fails with capability.not_declared",
                        p.key().unwrap_or("?")
                    ),
                    &format!("add `{cap}: \"^0.10.0\"` under requires.capabilities"),
                ));
            }
        }
    }
    out
}

/// The package-relative folder of `runtimePackage.ui.path` (`./ui/` → `ui/`, `.` → ``).
pub fn ui_folder(m: &Manifest) -> Option<String> {
    let p = m.view().runtime_package().ui_path()?.as_str()?;
    let p = p.trim_start_matches("./").trim_end_matches('/');
    if p.is_empty() || p == "." {
        return Some(String::new());
    }
    Some(format!("{p}/"))
}

/// Whether `path` is a file this module scans: `.html`, `.htm` or `.css` under the UI folder.
pub fn scans(ui_folder: &str, path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    path.starts_with(ui_folder) && [".html", ".htm", ".css"].iter().any(|e| lower.ends_with(e))
}

/// The findings of one scanned file (`text` already cut to the bound).
pub fn file_findings(m: &Manifest, path: &str, text: &[u8], max: usize) -> Vec<Finding> {
    let ui = m.view().ui();
    let forms = ui.frame_flag(FrameFlag::Forms);
    let inline_styles = ui.frame_flag(FrameFlag::InlineStyles);
    let keep = |kind| match kind {
        HitKind::Form => !forms,
        HitKind::InlineStyle | HitKind::StyleAttribute => !inline_styles,
        _ => true,
    };
    let mut hits: Vec<Hit> = Vec::new();
    if path.to_ascii_lowercase().ends_with(".css") {
        html::scan_css(text, &mut hits, max);
    } else {
        html::scan_html(text, &mut hits, max, &keep);
    }
    hits.into_iter()
        .filter_map(|h| finding_of(h, path, forms, inline_styles))
        .collect()
}

fn finding_of(h: Hit, path: &str, forms: bool, inline_styles: bool) -> Option<Finding> {
    let (code, message, fix) = match h.kind {
        HitKind::InlineScript => (
            INLINE_SCRIPT,
            "an inline <script> never runs: the frame's CSP allows scripts only from the app's own files".to_owned(),
            "move the code to a file (e.g. ui/app.js) and load it with <script type=\"module\" src=\"app.js\"></script>".to_owned(),
        ),
        HitKind::InlineHandler => (
            INLINE_HANDLER,
            format!("the {} attribute never runs: the CSP refuses inline event handlers", h.detail),
            format!(
                "give the element an id and call addEventListener('{}', …) from your script file",
                h.detail.trim_start_matches("on")
            ),
        ),
        HitKind::InlineStyle if !inline_styles => (
            INLINE_STYLE,
            "an inline <style> is ignored: the CSP allows styles only from the app's own files".to_owned(),
            "move the rules to a stylesheet (e.g. ui/style.css) linked with <link rel=\"stylesheet\" href=\"style.css\">, or declare ui.frame.inlineStyles: true".to_owned(),
        ),
        HitKind::StyleAttribute if !inline_styles => (
            STYLE_ATTRIBUTE,
            "a style= attribute is ignored: the CSP refuses inline styles".to_owned(),
            "use a class from your stylesheet, or declare ui.frame.inlineStyles: true".to_owned(),
        ),
        HitKind::Form if !forms => (
            FORM_WITHOUT_FORMS,
            "a <form> cannot submit: the frame's sandbox allows forms only with ui.frame.forms".to_owned(),
            "declare `ui: {frame: {forms: true}}`, or handle the submit event in your script and call preventDefault()".to_owned(),
        ),
        HitKind::ExternalUrl => (
            EXTERNAL_URL,
            format!("{} is blocked: the CSP loads scripts, styles, images and fonts only from the app's own files", h.detail),
            "vendor the file into the UI folder and refer to it by a relative path (for the SDK: `apphost sdk --out ui/vendor`)".to_owned(),
        ),
        HitKind::InlineStyle | HitKind::StyleAttribute | HitKind::Form => return None,
    };
    Some(Finding {
        severity: Severity::Warning,
        code,
        path: path.to_owned(),
        message,
        line: Some(h.line),
        fix: Some(fix),
    })
}

/// All authoring findings of a package: `files` lists (path, size) in package order; `read`
/// returns at most `limit` leading bytes of a file (`None`: could not be read, skipped).
pub fn check(
    m: &Manifest,
    files: &[(&str, u64)],
    bounds: Bounds,
    read: &mut dyn FnMut(&str, usize) -> Option<Vec<u8>>,
) -> Vec<Finding> {
    let mut out = manifest_findings(m);
    out.truncate(bounds.max_findings);
    let Some(folder) = ui_folder(m) else {
        return out;
    };
    let mut truncated: Vec<String> = Vec::new();
    let scanned = files.iter().filter(|(p, _)| scans(&folder, p));
    for (n, (path, size)) in scanned.enumerate() {
        let room = bounds.max_findings.saturating_sub(out.len());
        if n == bounds.max_files || room == 0 {
            truncated.push(format!(
                "stopped before {path} (at most {} files and {} findings are scanned)",
                bounds.max_files, bounds.max_findings
            ));
            break;
        }
        let Some(text) = read(path, bounds.max_file_bytes) else {
            continue;
        };
        if *size as usize > bounds.max_file_bytes {
            truncated.push(format!(
                "only the first {} bytes of {path} were scanned",
                bounds.max_file_bytes
            ));
        }
        let text = &text[..text.len().min(bounds.max_file_bytes)];
        // One more than there is room for tells "more" from "exactly as many".
        let mut found = file_findings(m, path, text, room + 1);
        if found.len() > room {
            found.truncate(room);
            truncated.push(format!(
                "{path} has more than the {} findings reported",
                bounds.max_findings
            ));
        }
        out.extend(found);
    }
    out.truncate(bounds.max_findings);
    if let Some(first) = truncated.first() {
        out.push(warn(
            SCAN_TRUNCATED,
            "package".into(),
            None,
            format!("the authoring scan is incomplete: {first}"),
            "split large pages into smaller files; fix the findings above and validate again",
        ));
    }
    out
}

#[cfg(test)]
mod tests;
