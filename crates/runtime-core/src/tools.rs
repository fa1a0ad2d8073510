//! Host tools offered to the model, scoped to the calling app: its storage (the app's data
//! directory) and its artifacts. Each is described by a JSON Schema; risky ones (writes) need
//! an explicit approval per call. Paths are relative to the app's directory and can never leave
//! it (no `..`, no absolute paths, no symlinks followed).

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use crate::app_data::AppDataStore;
use crate::backend::ToolSpec;
use crate::ids::{AppId, ArtifactId};
use crate::turn::ArtifactRecord;

/// Largest file `storage_read` returns (bytes).
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
/// Largest content `storage_write` / `artifact_write` accept (bytes).
pub const MAX_WRITE_BYTES: usize = 4 * 1024 * 1024;

/// A failed tool call: a stable code and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: String,
    pub message: String,
}

fn terr(code: &str, message: impl Into<String>) -> ToolError {
    ToolError {
        code: code.into(),
        message: message.into(),
    }
}

/// The host tool set.
#[derive(Clone, Debug)]
pub struct HostTools {
    apps: AppDataStore,
}

pub type ToolOutput = (String, Vec<ArtifactRecord>);

impl HostTools {
    pub fn new(apps: AppDataStore) -> Self {
        HostTools { apps }
    }

    pub fn specs() -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "storage_list".into(),
                description: "List the files in this app's storage (path and size per line).".into(),
                parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
                risky: false,
            },
            ToolSpec {
                name: "storage_read".into(),
                description: "Read a UTF-8 text file from this app's storage.".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 1, "maxLength": 255}}, "required": ["path"], "additionalProperties": false}),
                risky: false,
            },
            ToolSpec {
                name: "storage_write".into(),
                description: "Write a text file in this app's storage (replaces it). Needs the user's approval.".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 1, "maxLength": 255}, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false}),
                risky: true,
            },
            ToolSpec {
                name: "artifact_write".into(),
                description: "Save a text deliverable as a new artifact of this app.".into(),
                parameters: json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 200}, "content": {"type": "string"}, "kind": {"type": "string", "maxLength": 64}}, "required": ["title", "content"], "additionalProperties": false}),
                risky: false,
            },
        ]
    }

    /// Runs `name` for `app` (blocking file I/O: call from a blocking thread).
    pub fn run(&self, app: &AppId, name: &str, args: &Value) -> Result<ToolOutput, ToolError> {
        let dir = self.apps.dir(app);
        match name {
            "storage_list" => {
                // The walk never follows links or opens special files (app_data.rs).
                let files = self.apps.list(app).files;
                let mut out = String::new();
                for f in files {
                    out.push_str(&format!("{}\t{}\n", f.path, f.size));
                }
                Ok((out, Vec::new()))
            }
            "storage_read" => {
                let path = resolve(&dir, str_arg(args, "path")?)?;
                let meta = std::fs::symlink_metadata(&path)
                    .map_err(|_| terr("not_found", "no such file in this app's storage"))?;
                if !meta.is_file() {
                    return Err(terr("not_a_file", "the path is not a regular file"));
                }
                if meta.len() > MAX_READ_BYTES {
                    return Err(terr(
                        "too_large",
                        format!("the file is over {MAX_READ_BYTES} bytes"),
                    ));
                }
                let bytes =
                    std::fs::read(&path).map_err(|e| terr("storage_error", e.to_string()))?;
                Ok((String::from_utf8_lossy(&bytes).into_owned(), Vec::new()))
            }
            "storage_write" => {
                let content = str_arg(args, "content")?;
                if content.len() > MAX_WRITE_BYTES {
                    return Err(terr("too_large", "content is too large"));
                }
                self.apps
                    .ensure(app)
                    .map_err(|e| terr("storage_error", e.to_string()))?;
                let path = resolve(&dir, str_arg(args, "path")?)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| terr("storage_error", e.to_string()))?;
                }
                write_atomic(&path, content.as_bytes())?;
                Ok((format!("wrote {} bytes", content.len()), Vec::new()))
            }
            "artifact_write" => {
                let content = str_arg(args, "content")?;
                if content.len() > MAX_WRITE_BYTES {
                    return Err(terr("too_large", "content is too large"));
                }
                let title = str_arg(args, "title")?.to_owned();
                let kind = args
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("text")
                    .to_owned();
                let id = ArtifactId::random();
                let adir = dir.join("artifacts");
                std::fs::create_dir_all(&adir).map_err(|e| terr("storage_error", e.to_string()))?;
                write_atomic(
                    &adir.join(format!("{}.txt", id.as_str())),
                    content.as_bytes(),
                )?;
                let record = ArtifactRecord {
                    artifact_ref: format!("artifact://{}/{}", app.as_str(), id.as_str()),
                    artifact_id: id,
                    kind,
                    title,
                    bytes: content.len() as u64,
                };
                Ok((
                    format!("saved artifact {}", record.artifact_ref),
                    vec![record],
                ))
            }
            other => Err(terr("unknown_tool", format!("no tool named {other:?}"))),
        }
    }

    /// The file behind an `artifact://<app>/<id>` ref, if it belongs to `app`.
    pub fn artifact_path(&self, app: &AppId, artifact_ref: &str) -> Option<PathBuf> {
        let rest = artifact_ref.strip_prefix("artifact://")?;
        let (a, id) = rest.split_once('/')?;
        if a != app.as_str() {
            return None;
        }
        let id = ArtifactId::new(id).ok()?;
        Some(
            self.apps
                .dir(app)
                .join("artifacts")
                .join(format!("{}.txt", id.as_str())),
        )
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| terr("invalid_arguments", format!("{key} must be a string")))
}

/// `rel` inside `dir`, refusing anything that could leave it.
fn resolve(dir: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    let p = Path::new(rel);
    if rel.is_empty() || rel.len() > 255 || rel.contains('\0') {
        return Err(terr("invalid_path", "the path must be 1..=255 bytes"));
    }
    let mut out = dir.to_path_buf();
    for c in p.components() {
        match c {
            Component::Normal(s) => {
                out.push(s);
                if let Ok(m) = std::fs::symlink_metadata(&out) {
                    if m.file_type().is_symlink() {
                        return Err(terr("invalid_path", "symlinks are not followed"));
                    }
                }
            }
            _ => {
                return Err(terr(
                    "invalid_path",
                    "the path must be relative, without '..'",
                ))
            }
        }
    }
    Ok(out)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let tmp = path.with_extension("partial-write");
    let r = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r.map_err(|e| terr("storage_error", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_cannot_leave_the_app_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let tools = HostTools::new(AppDataStore::new(tmp.path()));
        let app = AppId::new("demo").unwrap();
        for bad in ["../x", "/etc/passwd", "a/../../b", ""] {
            let e = tools
                .run(&app, "storage_read", &json!({"path": bad}))
                .unwrap_err();
            assert_eq!(e.code, "invalid_path", "{bad}");
        }
        tools
            .run(
                &app,
                "storage_write",
                &json!({"path": "d/a.txt", "content": "hi"}),
            )
            .unwrap();
        let (out, _) = tools
            .run(&app, "storage_read", &json!({"path": "d/a.txt"}))
            .unwrap();
        assert_eq!(out, "hi");
        let other = AppId::new("other").unwrap();
        assert_eq!(
            tools
                .run(&other, "storage_read", &json!({"path": "d/a.txt"}))
                .unwrap_err()
                .code,
            "not_found"
        );
    }
}
