//! Shared by the catalog tests: a publisher's repository built with host-core's own
//! `catalog build` code, a loopback server, and the `apphost` CLI with a data directory.
#![allow(dead_code)]

pub mod https;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::Command;

use host_core::foundation::limits::Limits;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::InspectOptions;
use host_core::install::remote::publish::{self, Expiries, Keys};
use host_core::install::signature;
use serde_json::Value;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Zips a folder with Python's zipfile (files at the zip's root).
pub fn zip_dir(src: &Path, out: &Path) {
    let st = Command::new("python3")
        .arg("-c")
        .arg(
            "import os, sys, zipfile\n\
             src, out = sys.argv[1], sys.argv[2]\n\
             with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:\n\
             \x20   for d, _, fs in sorted(os.walk(src)):\n\
             \x20       for f in sorted(fs):\n\
             \x20           p = os.path.join(d, f)\n\
             \x20           z.write(p, os.path.relpath(p, src))\n",
        )
        .arg(src)
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Every role valid for 30 days.
pub fn month() -> Expiries {
    Expiries::from_now(Some("30d")).unwrap()
}

/// Every role valid for 30 days but `role`, expired in 2020.
pub fn expired(role: &str) -> Expiries {
    let mut e = month();
    let past = "2020-01-01T00:00:00Z".parse().unwrap();
    match role {
        "root" => e.root = past,
        "targets" => e.targets = past,
        "snapshot" => e.snapshot = past,
        _ => e.timestamp = past,
    }
    e
}

/// A publisher's folder of packages and the repository built from it.
pub struct Repo {
    pub packages: PathBuf,
    pub out: PathBuf,
    pub keys: Keys,
}

impl Repo {
    pub fn new(tmp: &Path) -> Repo {
        let packages = tmp.join("packages");
        std::fs::create_dir_all(&packages).unwrap();
        Repo {
            packages,
            out: tmp.join("repo"),
            keys: Keys::single(&signature::generate_key().unwrap()),
        }
    }

    /// Zips `fixtures/packages/good/<fixture>` into the packages folder.
    pub fn add(&self, fixture: &str) -> PathBuf {
        let zip = self.packages.join(format!("{fixture}.zip"));
        zip_dir(
            &repo_root().join("fixtures/packages/good").join(fixture),
            &zip,
        );
        zip
    }

    pub fn build(&self) {
        self.build_with(&month());
    }

    pub fn build_with(&self, expiries: &Expiries) {
        let profile = HostProfile::current();
        let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
        publish::build(&self.packages, &self.out, &self.keys, expiries, &opts).unwrap();
    }

    pub fn metadata(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.out.join("metadata").join(name)).unwrap()
    }

    pub fn root_file(&self) -> PathBuf {
        self.out.join("metadata/1.root.json")
    }
}

/// Runs `apphost --json --data-dir <data> args...`: exit code and the JSON it printed (stdout,
/// or the `{"error": ...}` on stderr).
pub fn cli(tmp: &Path, data: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let mut cmd = crate::common::apphost_in(tmp, data);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let text = if out.stdout.is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    let value = serde_json::from_slice(text)
        .or_else(|_| {
            // The last line of stderr holds the error.
            let s = String::from_utf8_lossy(&out.stderr);
            serde_json::from_str(s.lines().last().unwrap_or(""))
        })
        .unwrap_or_else(|_| Value::String(crate::common::describe(&out)));
    (code, value)
}

/// The error code a failed command printed.
pub fn code_of(v: &Value) -> String {
    v["error"]["code"].as_str().unwrap_or_default().to_owned()
}
