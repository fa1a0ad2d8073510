//! The per-operation journal: `staging/<op>/journal.json`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::staging_fs::{sync_dir, sync_parent};
use super::{failpoint, io};
use crate::foundation::error::HostResult;
use crate::foundation::paths::DataDir;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Journal {
    pub op_id: String,
    pub kind: String,
    pub app: Option<String>,
    /// Directories moved aside by this operation (`from` → `to`), undone on rollback.
    #[serde(default)]
    pub moves: Vec<Move>,
    /// Temporary files (possibly outside the data directory) this operation may leave behind:
    /// removed by recovery whatever the outcome.
    #[serde(default)]
    pub temp_files: Vec<PathBuf>,
    /// Files this operation creates for the user (an export): removed if it rolls back.
    #[serde(default)]
    pub rollback_files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Move {
    pub from: PathBuf,
    pub to: PathBuf,
}

/// An operation in progress: its staging folder and journal.
pub struct Op {
    pub dir: PathBuf,
    pub journal: Journal,
}

impl Op {
    pub fn begin(data: &DataDir, kind: &str, app: Option<&str>) -> HostResult<Op> {
        let op_id = format!("{kind}-{}", random_id()?);
        let staging = data.staging();
        if !staging.is_dir() {
            runtime_core::private_fs::create_private_dir(&staging)
                .map_err(|e| io("cannot create", &staging, e))?;
            sync_dir(data.root())?;
        }
        let dir = staging.join(&op_id);
        // `create_dir`, not `create_dir_all`: an id in use is an error, never shared.
        std::os::unix::fs::DirBuilderExt::mode(&mut fs::DirBuilder::new(), 0o700)
            .create(&dir)
            .map_err(|e| io("cannot create", &dir, e))?;
        sync_dir(&staging)?;
        let op = Op {
            dir,
            journal: Journal {
                op_id,
                kind: kind.into(),
                app: app.map(str::to_owned),
                ..Default::default()
            },
        };
        op.write()?;
        failpoint::hit("op.begin");
        Ok(op)
    }

    /// Persists the journal (write to a temporary file, fsync, rename).
    pub fn write(&self) -> HostResult<()> {
        let tmp = self.dir.join("journal.json.tmp");
        let dest = self.dir.join("journal.json");
        let mut f = runtime_core::private_fs::create_private_file(&tmp)
            .map_err(|e| io("cannot write", &tmp, e))?;
        f.write_all(&serde_json::to_vec_pretty(&self.journal).expect("journal serializes"))
            .map_err(|e| io("cannot write", &tmp, e))?;
        f.sync_all().map_err(|e| io("cannot sync", &tmp, e))?;
        fs::rename(&tmp, &dest).map_err(|e| io("cannot rename", &tmp, e))?;
        sync_dir(&self.dir)
    }

    /// Moves `from` aside into this operation's folder, journaling it first.
    pub fn move_aside(&mut self, from: &Path, name: &str) -> HostResult<PathBuf> {
        debug_assert!(from.is_absolute(), "journaled paths are absolute");
        let to = self.dir.join(name);
        self.journal.moves.push(Move {
            from: from.to_owned(),
            to: to.clone(),
        });
        self.write()?;
        failpoint::hit("op.move_journaled");
        fs::rename(from, &to).map_err(|e| io("cannot move", from, e))?;
        // Both directory entries are durable before the commit that depends on them.
        sync_parent(from)?;
        sync_dir(&self.dir)?;
        failpoint::hit("op.moved");
        Ok(to)
    }

    /// Journals a file this operation will create (`temp`: always removed by recovery;
    /// otherwise removed only if the operation rolls back). Paths must be absolute: recovery
    /// may run from another working directory.
    pub fn remember_file(&mut self, path: &Path, temp: bool) -> HostResult<()> {
        debug_assert!(path.is_absolute(), "journaled paths are absolute");
        if temp {
            self.journal.temp_files.push(path.to_owned());
        } else {
            self.journal.rollback_files.push(path.to_owned());
        }
        self.write()
    }

    /// Retires the staging folder: the operation is over.
    pub fn finish(self) -> HostResult<()> {
        super::staging_fs::retire(&self.dir)
    }
}

pub fn read(dir: &Path) -> Option<Journal> {
    let bytes = fs::read(dir.join("journal.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

use crate::foundation::random::random_id;
