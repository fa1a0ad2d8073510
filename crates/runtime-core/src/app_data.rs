//! The per-app data area: one directory per app under a root the host chooses.
//!
//! It holds everything the app owns at runtime (its SQLite storage, artifacts, caches). The
//! host's own database never lives here, and nothing here is shared between apps. Uninstall can
//! keep it, delete it, or export it as a zip first.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::ids::AppId;

#[derive(Debug, thiserror::Error)]
pub enum AppDataError {
    #[error("i/o error on {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("zip error writing {path}: {message}")]
    Zip { path: PathBuf, message: String },
    #[error("refusing to export app data that contains a symlink: {0}")]
    Symlink(PathBuf),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> AppDataError + '_ {
    move |source| AppDataError::Io {
        path: path.to_owned(),
        source,
    }
}

/// One file in an app's data area, with its path relative to the app's directory ('/' separated).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DataFile {
    pub path: String,
    pub size: u64,
}

#[derive(Debug, Clone)]
pub struct AppDataStore {
    root: PathBuf,
}

impl AppDataStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        AppDataStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The app's directory. It may not exist yet.
    pub fn dir(&self, app: &AppId) -> PathBuf {
        self.root.join(app.as_str())
    }

    pub fn exists(&self, app: &AppId) -> bool {
        self.dir(app).is_dir()
    }

    /// Creates the app's directory if missing (the storage namespace).
    pub fn ensure(&self, app: &AppId) -> Result<PathBuf, AppDataError> {
        let dir = self.dir(app);
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        Ok(dir)
    }

    /// Every regular file under the app's directory, sorted by path.
    pub fn list_files(&self, app: &AppId) -> Result<Vec<DataFile>, AppDataError> {
        let dir = self.dir(app);
        let mut out = Vec::new();
        if dir.is_dir() {
            walk(&dir, "", &mut out)?;
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Writes a zip of the app's data to `dest` (through a temporary file renamed into place, so
    /// `dest` is either the complete export or absent). Returns the files exported.
    pub fn export_zip(&self, app: &AppId, dest: &Path) -> Result<Vec<DataFile>, AppDataError> {
        let files = self.list_files(app)?;
        let dir = self.dir(app);
        let tmp = partial_export_path(dest);
        let result = (|| {
            let file = fs::File::create(&tmp).map_err(io_err(&tmp))?;
            let mut zip = zip::ZipWriter::new(file);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(zip::DateTime::default());
            let zerr = |e: zip::result::ZipError| AppDataError::Zip {
                path: dest.to_owned(),
                message: e.to_string(),
            };
            for f in &files {
                zip.start_file(format!("{}/{}", app.as_str(), f.path), opts)
                    .map_err(zerr)?;
                let src = dir.join(&f.path);
                let mut input = fs::File::open(&src).map_err(io_err(&src))?;
                io::copy(&mut input, &mut zip).map_err(io_err(&src))?;
            }
            let mut file = zip.finish().map_err(zerr)?;
            file.flush().map_err(io_err(&tmp))?;
            file.sync_all().map_err(io_err(&tmp))?;
            fs::rename(&tmp, dest).map_err(io_err(dest))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map(|()| files)
    }
}

/// The temporary file [`AppDataStore::export_zip`] writes before renaming it to `dest`.
pub fn partial_export_path(dest: &Path) -> PathBuf {
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent.join(format!(
        ".{}.partial",
        dest.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("export.zip")
    ))
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<DataFile>) -> Result<(), AppDataError> {
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(io_err(&path))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if ft.is_symlink() {
            return Err(AppDataError::Symlink(path));
        } else if ft.is_dir() {
            walk(&path, &rel, out)?;
        } else {
            let size = entry.metadata().map_err(io_err(&path))?.len();
            out.push(DataFile { path: rel, size });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_contains_every_file_and_leaves_no_partial_file() {
        let tmp = tempfile::tempdir().unwrap();
        let store = AppDataStore::new(tmp.path().join("apps"));
        let app = AppId::new("demo").unwrap();
        let dir = store.ensure(&app).unwrap();
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.txt"), b"hello").unwrap();
        fs::write(dir.join("sub/b.bin"), vec![7u8; 1000]).unwrap();

        let dest = tmp.path().join("out.zip");
        let files = store.export_zip(&app, &dest).unwrap();
        assert_eq!(files.len(), 2);
        let mut zip = zip::ZipArchive::new(fs::File::open(&dest).unwrap()).unwrap();
        let mut names: Vec<_> = (0..zip.len())
            .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, vec!["demo/a.txt", "demo/sub/b.bin"]);
        let leftovers: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn listing_a_missing_app_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let store = AppDataStore::new(tmp.path());
        assert!(store
            .list_files(&AppId::new("none").unwrap())
            .unwrap()
            .is_empty());
    }
}
