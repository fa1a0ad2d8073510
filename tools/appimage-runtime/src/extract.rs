//! Extracting the image's squashfs into a folder (`--appimage-extract`, and extract-and-run when
//! FUSE is not usable). Paths come from the image, so each is checked: relative, no `..`, and no
//! parent inside the target that is a symlink (an image cannot write outside the folder).

use backhand::{FilesystemReader, InnerNode};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader};
use std::os::unix::fs::{symlink, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Extracts the squashfs at `offset` in `image` into `dest` (created if missing). With `prefix`,
/// only entries whose path (relative, as `unsquashfs` prints it) starts with it.
pub fn extract(image: &Path, offset: u64, dest: &Path, prefix: Option<&str>) -> Result<(), String> {
    let file = File::open(image).map_err(|e| format!("{}: {e}", image.display()))?;
    let fs = FilesystemReader::from_reader_with_offset(BufReader::new(file), offset)
        .map_err(|e| format!("cannot read the squashfs: {e}"))?;
    fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let mut dirs = Vec::new();
    for node in fs.files() {
        let Some(relative) = safe_relative(&node.fullpath)? else {
            continue; // the root
        };
        if let Some(prefix) = prefix {
            if !relative.to_string_lossy().starts_with(prefix) {
                continue;
            }
        }
        let target = dest.join(&relative);
        check_parents(dest, &relative)?;
        let mode = u32::from(node.header.permissions) & 0o7777;
        let io_err = |e: io::Error| format!("{}: {e}", target.display());
        match &node.inner {
            InnerNode::Dir(_) => {
                fs::create_dir_all(&target).map_err(io_err)?;
                dirs.push((target, mode));
            }
            InnerNode::File(entry) => {
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(io_err)?;
                }
                let _ = fs::remove_file(&target);
                let mut out = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&target)
                    .map_err(io_err)?;
                let mut reader = fs
                    .file(entry)
                    .reader_checked()
                    .map_err(|e| format!("{}: {e}", relative.display()))?;
                io::copy(&mut reader, &mut out).map_err(io_err)?;
                fs::set_permissions(&target, fs::Permissions::from_mode(mode)).map_err(io_err)?;
            }
            InnerNode::Symlink(link) => {
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(io_err)?;
                }
                let _ = fs::remove_file(&target);
                symlink(&link.link, &target).map_err(io_err)?;
            }
            // Devices, pipes and sockets have no place in an application image.
            _ => {}
        }
    }
    // Directory modes last, so a read-only directory does not stop its own extraction.
    for (dir, mode) in dirs.into_iter().rev() {
        let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(mode | 0o700));
    }
    Ok(())
}

/// The image path without its leading `/`; `None` for the root; an error for `..` or anything
/// that is not a plain name.
fn safe_relative(full: &Path) -> Result<Option<PathBuf>, String> {
    let mut out = PathBuf::new();
    for component in full.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(name) => out.push(name),
            _ => {
                return Err(format!(
                    "refused: unsafe path in the image: {}",
                    full.display()
                ))
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Every existing parent of `relative` under `dest` is a real directory, not a symlink.
fn check_parents(dest: &Path, relative: &Path) -> Result<(), String> {
    let mut at = dest.to_path_buf();
    let mut parents = relative.components().peekable();
    while let Some(component) = parents.next() {
        if parents.peek().is_none() {
            break;
        }
        at.push(component);
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "refused: {} goes through a symlink in the image",
                    relative.display()
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_paths_stay_inside_the_target() {
        assert_eq!(safe_relative(Path::new("/")).unwrap(), None);
        assert_eq!(
            safe_relative(Path::new("/usr/bin/apphost")).unwrap(),
            Some(PathBuf::from("usr/bin/apphost"))
        );
        for evil in ["/../etc/passwd", "/usr/../../x", "../x"] {
            let error = safe_relative(Path::new(evil)).unwrap_err();
            assert!(error.starts_with("refused: unsafe path"), "{evil}: {error}");
        }
    }

    #[test]
    fn a_symlink_made_by_the_image_is_not_written_through() {
        let root = std::env::temp_dir().join(format!("appimage-rt-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let outside = root.join("outside");
        let dest = root.join("dest");
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(dest.join("real")).unwrap();
        symlink(&outside, dest.join("link")).unwrap();
        assert!(check_parents(&dest, Path::new("real/file")).is_ok());
        assert!(
            check_parents(&dest, Path::new("link")).is_ok(),
            "the link itself may be replaced"
        );
        let error = check_parents(&dest, Path::new("link/file")).unwrap_err();
        assert!(error.contains("through a symlink"), "{error}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        fs::remove_dir_all(&root).unwrap();
    }
}
