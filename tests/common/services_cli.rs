//! A data dir with the doc-parser sample installed, driven through the real `apphost` binary
//! (`--json`): the set-up `cli_services.rs`, `cli_services_health.rs` and
//! `cli_config_reserved.rs` share.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;
use tempfile::TempDir;

use super::{apphost_in, describe};

/// The doc-parser sample's app name.
pub const DOC_PARSER: &str = "doc-parser";

pub struct ServicesHost {
    pub tmp: TempDir,
    pub data: PathBuf,
    env: Vec<(String, String)>,
}

impl ServicesHost {
    /// doc-parser installed; its service can run (the sandbox shim is beside the binary).
    pub fn new() -> ServicesHost {
        ServicesHost::with_env(&[])
    }

    /// As [`ServicesHost::new`], with `env` set on every command.
    pub fn with_env(env: &[(&str, &str)]) -> ServicesHost {
        let shim =
            PathBuf::from(env!("CARGO_BIN_EXE_apphost")).with_file_name("apphost-service-shim");
        assert!(
            shim.is_file(),
            "build the sandbox shim first: cargo build -p service-sandbox --bin apphost-service-shim"
        );
        ServicesHost::installed(env)
    }

    /// doc-parser installed, for commands that start no service (no shim needed).
    pub fn installed(env: &[(&str, &str)]) -> ServicesHost {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let h = ServicesHost { tmp, data, env };
        let pkg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/doc-parser");
        let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
        assert!(out.status.success(), "{}", describe(&out));
        h
    }

    pub fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(args)
            .output()
            .unwrap()
    }

    /// The JSON a successful command prints.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }
}
