//! A whole folder or nothing: the files are written into a hidden sibling of the target
//! (`.<name>.partial-<random>`, same file system) and that folder is renamed onto the target,
//! which must be absent or an empty folder (a rename replaces an empty directory atomically).
//! Files and folders are fsynced before the rename, the parent after it. Any failure removes the
//! sibling; the target is never touched before the rename.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use host_core::{ErrorCode, HostError, HostResult};

/// Writes `files` (`(relative path, bytes)`) as the folder `target`.
pub fn write_tree(target: &Path, files: &[(String, Vec<u8>)]) -> HostResult<()> {
    refuse_non_empty(target)?;
    let name = target.file_name().ok_or_else(|| {
        failed(
            target,
            "the target has no folder name (it ends in `..` or is a root)".into(),
        )
    })?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(failed(
            target,
            format!("the folder {} does not exist", parent.display()),
        ));
    }
    let staging = parent.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        random_suffix()?
    ));
    std::fs::create_dir(&staging)
        .map_err(|e| failed(target, format!("cannot create {}: {e}", staging.display())))?;
    fill(&staging, files)
        .and_then(|()| move_into_place(&staging, target))
        .inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&staging);
        })?;
    // The rename itself, durable: the folder's new name is in its parent.
    sync_dir(target, &parent)
}

/// Renames the filled `staging` folder onto `target`. A target filled, made a file or a link
/// since it was checked is `author.target_exists`: rename(2) never replaces a non-empty folder,
/// a file or a link with a folder.
fn move_into_place(staging: &Path, target: &Path) -> HostResult<()> {
    std::fs::rename(staging, target).map_err(|e| {
        use std::io::ErrorKind;
        if matches!(
            e.kind(),
            ErrorKind::DirectoryNotEmpty | ErrorKind::AlreadyExists | ErrorKind::NotADirectory
        ) || target.symlink_metadata().is_ok_and(|m| !m.is_dir())
        {
            exists(target)
        } else {
            failed(
                target,
                format!("cannot move the new folder into place: {e}"),
            )
        }
    })
}

/// `author.target_exists` unless `target` is absent or an empty folder (not a link to one).
fn refuse_non_empty(target: &Path) -> HostResult<()> {
    match target.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(failed(
            target,
            format!("cannot read {}: {e}", target.display()),
        )),
        Ok(m) if m.is_dir() => match std::fs::read_dir(target).map(|mut e| e.next().is_none()) {
            Ok(true) => Ok(()),
            Ok(false) => Err(exists(target)),
            Err(e) => Err(failed(
                target,
                format!("cannot read {}: {e}", target.display()),
            )),
        },
        Ok(_) => Err(exists(target)),
    }
}

/// Writes every file and makes it durable (files, then their folders) before the rename
/// publishes the folder, so a crash never leaves a target with empty or missing files.
fn fill(root: &Path, files: &[(String, Vec<u8>)]) -> HostResult<()> {
    let mut dirs = std::collections::BTreeSet::from([root.to_path_buf()]);
    for (rel, bytes) in files {
        let path = root.join(checked_relative(rel)?);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| failed(root, format!("cannot create {}: {e}", dir.display())))?;
            dirs.extend(
                dir.ancestors()
                    .take_while(|d| d.starts_with(root))
                    .map(Path::to_path_buf),
            );
        }
        let mut file = std::fs::File::create_new(&path)
            .map_err(|e| failed(root, format!("cannot create {}: {e}", path.display())))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| failed(root, format!("cannot write {}: {e}", path.display())))?;
    }
    dirs.iter().try_for_each(|d| sync_dir(root, d))
}

fn sync_dir(root: &Path, dir: &Path) -> HostResult<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| failed(root, format!("cannot sync {}: {e}", dir.display())))
}

/// A relative path of normal components only (the embedded lists are ours, but a path that
/// could leave the folder is refused rather than trusted).
fn checked_relative(rel: &str) -> HostResult<&Path> {
    let path = Path::new(rel);
    if rel.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(HostError::new(
            ErrorCode::Internal,
            format!("refusing to write the file path {rel:?}"),
        ));
    }
    Ok(path)
}

fn random_suffix() -> HostResult<String> {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes)
        .map_err(|e| HostError::new(ErrorCode::Internal, format!("no random bytes: {e}")))?;
    Ok(hex::encode(bytes))
}

fn exists(target: &Path) -> HostError {
    HostError::new(
        ErrorCode::AuthorTargetExists,
        format!(
            "{} already exists and is not an empty folder; pick another name or folder",
            target.display()
        ),
    )
    .with("path", target.display().to_string())
}

fn failed(target: &Path, message: String) -> HostError {
    HostError::new(ErrorCode::AuthorWriteFailed, message).with("path", target.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![
            ("a/b.txt".into(), b"new".to_vec()),
            ("c.txt".into(), b"new".to_vec()),
        ]
    }

    /// The target changes between the check and the rename (another process fills it, or puts
    /// a file or a link there): the rename is refused as `author.target_exists` and what is
    /// there stays as it was.
    #[test]
    fn a_target_that_appears_after_the_check_is_never_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        for (name, make) in [
            (
                "filled",
                &(|p: &Path| {
                    std::fs::create_dir(p).unwrap();
                    std::fs::write(p.join("mine.txt"), "mine").unwrap();
                }) as &dyn Fn(&Path),
            ),
            ("file", &|p: &Path| std::fs::write(p, "mine").unwrap()),
            ("link", &|p: &Path| {
                std::os::unix::fs::symlink(tmp.path().join("other"), p).unwrap()
            }),
        ] {
            let staging = tmp.path().join(format!(".{name}.partial"));
            std::fs::create_dir(&staging).unwrap();
            fill(&staging, &files()).unwrap();
            let target = tmp.path().join(name);
            make(&target);
            let e = move_into_place(&staging, &target).unwrap_err();
            assert_eq!(e.code, ErrorCode::AuthorTargetExists, "{name}");
            match name {
                "filled" => assert_eq!(
                    std::fs::read_to_string(target.join("mine.txt")).unwrap(),
                    "mine"
                ),
                "file" => assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine"),
                _ => assert!(target.symlink_metadata().unwrap().is_symlink()),
            }
            assert!(
                std::fs::read_dir(&other).unwrap().next().is_none(),
                "nothing went through the link"
            );
        }
    }

    #[test]
    fn paths_that_leave_the_folder_are_refused_and_nothing_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("parent");
        std::fs::create_dir(&parent).unwrap();
        for bad in ["../x", "../../x", "/abs", "a/../../x", ""] {
            let target = parent.join("t");
            let e = write_tree(&target, &[("ok.txt".into(), vec![]), (bad.into(), vec![])])
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::Internal, "{bad:?}");
            let left: Vec<_> = std::fs::read_dir(&parent).unwrap().collect();
            assert!(left.is_empty(), "{bad:?} left {left:?}");
            assert!(
                !tmp.path().join("x").exists() && !parent.join("x").exists(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_whole_folder_lands_in_an_empty_target() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("t");
        std::fs::create_dir(&target).unwrap();
        write_tree(&target, &files()).unwrap();
        assert_eq!(std::fs::read(target.join("a/b.txt")).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t"], "no staging folder is left");
    }
}
