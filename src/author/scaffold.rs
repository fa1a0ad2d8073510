//! `apphost new`: an app project from an embedded template. The files are `templates/common/`
//! with the template's own folder over it, `{{name}}`, `{{title}}` and `{{version}}` replaced,
//! and the SDK's `dist/` vendored into `app/ui/sdk/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use host_core::{ErrorCode, HostError, HostResult};

use super::embedded::{sdk_available, sdk_dist, template_files, HOST_VERSION};
use super::write_tree::write_tree;

/// Where the package sits in a generated project (`apphost dev|validate|sign app`).
pub const PACKAGE_DIR: &str = "app";
/// Where the SDK is vendored inside the package.
pub const SDK_DIR: &str = "app/ui/sdk";
/// Longest name accepted before it is derived (the app id's own limit is 64 bytes).
const MAX_NAME_CHARS: usize = 64;

/// The templates `apphost new --template` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    /// A page that keeps a click count in lime.storage.
    Page,
    /// A page that asks the host's agent (lime.agent); needs a model set up in AppHost.
    Agent,
    /// A workflow (agent draft, the user's review, storage, artifact) started from a page
    /// through lime.workflow; needs a model set up in AppHost.
    Workflow,
}

impl Template {
    pub fn as_str(self) -> &'static str {
        match self {
            Template::Page => "page",
            Template::Agent => "agent",
            Template::Workflow => "workflow",
        }
    }
}

/// An app id and display name derived from what the user typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppName {
    /// The manifest's `name` (the app id) and the project folder's name.
    pub id: String,
    /// `displayName`: the typed name when it was not already the id, else the id's words capitalised.
    pub title: String,
}

/// The id is the name lowercased with each run of spaces turned into `-`; it must then follow
/// the manifest's id rule (`^[a-z0-9][a-z0-9-_.]*$`, 1..64 bytes), else `author.invalid_name`.
pub fn derive_app_id(name: &str) -> HostResult<AppName> {
    let typed = name.trim();
    if typed.chars().count() > MAX_NAME_CHARS {
        return Err(invalid(name, "is longer than 64 characters"));
    }
    let id = typed
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .to_lowercase();
    if !runtime_core::ids::is_valid_app_name(&id) {
        return Err(invalid(
            name,
            "must be letters a-z, digits, `-`, `_` or `.` (spaces become `-`), starting with a letter or digit",
        ));
    }
    let title = if typed == id {
        id.split(['-', '_', '.'])
            .filter(|w| !w.is_empty())
            .map(capitalised)
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        typed.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    Ok(AppName { id, title })
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn invalid(name: &str, why: &str) -> HostError {
    HostError::new(
        ErrorCode::AuthorInvalidName,
        format!("{name:?} cannot be an app id: it {why}"),
    )
    .with("name", name)
}

/// What `create_app` wrote.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub app_id: String,
    pub display_name: String,
    pub template: Template,
    /// The project folder.
    pub path: PathBuf,
    /// The package inside it (`<path>/app`).
    pub package: PathBuf,
    pub sdk_version: &'static str,
    pub files: usize,
}

/// The project's files: `(relative path, bytes)`, sorted.
pub fn render(template: Template, name: &AppName) -> HostResult<Vec<(String, Vec<u8>)>> {
    if !sdk_available() {
        return Err(HostError::new(
            ErrorCode::AuthorSdkMissing,
            "this apphost was built without the SDK (bridge-sdk/dist): run `npm run build` before `cargo build`",
        ));
    }
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for folder in ["common", template.as_str()] {
        for (rel, bytes) in template_files(folder) {
            files.insert(rel.to_owned(), fill_in(rel, bytes, name)?);
        }
    }
    for (rel, bytes) in sdk_dist() {
        files.insert(format!("{SDK_DIR}/{rel}"), bytes.to_vec());
    }
    Ok(files.into_iter().collect())
}

fn fill_in(rel: &str, bytes: &[u8], name: &AppName) -> HostResult<Vec<u8>> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        HostError::new(
            ErrorCode::Internal,
            format!("template file {rel} is not UTF-8"),
        )
    })?;
    Ok(text
        .replace("{{name}}", &name.id)
        .replace("{{title}}", &name.title)
        .replace("{{version}}", HOST_VERSION)
        .into_bytes())
}

/// Writes the project `<parent>/<id>` (whole or not at all).
pub fn create_app(parent: &Path, name: &str, template: Template) -> HostResult<Created> {
    let name = derive_app_id(name)?;
    let files = render(template, &name)?;
    let path = parent.join(&name.id);
    write_tree(&path, &files)?;
    Ok(Created {
        package: path.join(PACKAGE_DIR),
        path,
        app_id: name.id,
        display_name: name.title,
        template,
        sdk_version: HOST_VERSION,
        files: files.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_derive_from_names_and_follow_the_manifest_rule() {
        let n = derive_app_id("my-app").unwrap();
        assert_eq!((n.id.as_str(), n.title.as_str()), ("my-app", "My App"));
        let n = derive_app_id("  Trip  Planner ").unwrap();
        assert_eq!(
            (n.id.as_str(), n.title.as_str()),
            ("trip-planner", "Trip Planner")
        );
        for bad in [
            "",
            "   ",
            "-x",
            ".x",
            "a/b",
            "../x",
            "x<y",
            "é",
            "a\u{0}b",
            &"a".repeat(65),
        ] {
            let e = derive_app_id(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::AuthorInvalidName, "{bad:?}");
        }
        assert_eq!(derive_app_id(&"a".repeat(64)).unwrap().id.len(), 64);
    }

    #[test]
    fn every_placeholder_is_filled() {
        let name = derive_app_id("demo").unwrap();
        for t in [Template::Page, Template::Agent, Template::Workflow] {
            for folder in ["common", t.as_str()] {
                for (rel, bytes) in template_files(folder) {
                    let text = String::from_utf8(fill_in(rel, bytes, &name).unwrap()).unwrap();
                    // `{{word}}` left over is a misspelt placeholder (JSDoc's `{{a: T}}` is not).
                    let left = text.match_indices("{{").any(|(at, _)| {
                        let rest = &text[at + 2..];
                        let word = rest.len()
                            - rest
                                .trim_start_matches(|c: char| c.is_ascii_lowercase())
                                .len();
                        word > 0 && rest[word..].starts_with("}}")
                    });
                    assert!(!left, "{rel} keeps a placeholder");
                }
            }
        }
    }
}
