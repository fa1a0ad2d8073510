//! Shared setup for the service sandbox tests: a copy of the probe fixture app and a fake host
//! data area full of things the service must never reach.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use service_sandbox::{Limits, ServiceProcess, ServiceSpec};

mod planes;

#[allow(unused_imports)]
pub use planes::{
    apps, cancel_after, http_service_spec, load_transform, supervise, transform_spec, wait_for,
};

pub struct Host {
    pub tmp: tempfile::TempDir,
    pub package: PathBuf,
    pub data: PathBuf,
    pub service_dir: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            fs::copy(e.path(), dst).unwrap();
        }
    }
}

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/apps/service-probe")
}

impl Host {
    pub fn setup() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let package = tmp.path().join("store/service-probe/1.0.0");
        copy_dir(&fixture(), &package);
        let data = tmp.path().join("data");
        let service_dir = data.join("apps/service-probe/services/probe");
        fs::create_dir_all(&service_dir).unwrap();
        fs::create_dir_all(data.join("apps/other-app")).unwrap();
        fs::write(
            data.join("apps/other-app/notes.txt"),
            "other app's private notes",
        )
        .unwrap();
        fs::write(data.join("host.db"), "SQLite format 3\0 host database").unwrap();
        fs::write(data.join("secrets.enc"), "encrypted secrets").unwrap();
        fs::write(data.join("model.key"), "sk-model-key").unwrap();
        fs::create_dir_all(tmp.path().join("home/.ssh")).unwrap();
        fs::write(tmp.path().join("home/.ssh/id_rsa"), "PRIVATE KEY").unwrap();
        Host {
            tmp,
            package,
            data,
            service_dir,
        }
    }

    pub fn spec(&self, program: &[&str]) -> ServiceSpec {
        ServiceSpec {
            package_dir: self.package.clone(),
            service_dir: self.service_dir.clone(),
            program: program.iter().map(|s| s.to_string()).collect(),
            network: false,
            limits: Limits {
                address_space: 1 << 30,
                max_processes: 32,
                ..Limits::default()
            },
            shim: PathBuf::from(env!("CARGO_BIN_EXE_apphost-service-shim")),
            bwrap: PathBuf::new(),
        }
    }

    pub fn probe_spec(&self) -> ServiceSpec {
        self.spec(&["/usr/bin/python3", "/app/services/probe/probe.py"])
    }

    /// Where a supervisor of the probe service logs.
    pub fn probe_log(&self) -> PathBuf {
        self.data
            .join("apps/service-probe/services/.logs/probe.log")
    }

    pub fn start_probe(&self) -> ServiceProcess {
        ServiceProcess::start(
            &self.probe_spec(),
            Box::new(|m, p| Ok(serde_json::json!({"method": m, "params": p}))),
        )
        .unwrap()
    }

    /// Every file under `dir` with its content, to prove nothing changed.
    pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let meta = fs::symlink_metadata(&p).unwrap();
                if meta.is_dir() {
                    stack.push(p);
                } else {
                    let content = fs::read(&p).unwrap_or_default();
                    out.push((p, content));
                }
            }
        }
        out.sort();
        out
    }
}

/// Children of this process (pids whose ppid is ours).
pub fn children() -> Vec<i32> {
    let me = std::process::id().to_string();
    let mut kids = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<i32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let ppid = after.split_whitespace().nth(1).unwrap_or("");
        if ppid == me {
            kids.push(pid);
        }
    }
    kids
}

pub fn open_fds() -> usize {
    fs::read_dir("/proc/self/fd").unwrap().count()
}
