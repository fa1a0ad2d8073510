//! The local HTTPS catalog of the end-to-end tests: `https_catalog.py` (Python's http.server
//! behind ssl, a throwaway CA made with the openssl CLI), killed on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct HttpsCatalog {
    pub url: String,
    /// The CA the client must be told about (`APPHOST_CATALOG_CA_FILE`).
    pub ca: PathBuf,
    certs: PathBuf,
    child: Child,
}

impl HttpsCatalog {
    /// Serves `dir` (a `catalog build` output) under `/repo/`; certificates go to `certs`.
    pub fn start(dir: &Path, certs: &Path) -> HttpsCatalog {
        let script = super::repo_root().join("tests/catalog_support/https_catalog.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--dir")
            .arg(dir)
            .arg("--certs")
            .arg(certs)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("https_catalog.py said {line:?}: {e}"));
        HttpsCatalog {
            url: v["url"].as_str().unwrap().to_owned(),
            ca: PathBuf::from(v["ca"].as_str().unwrap()),
            certs: certs.to_owned(),
            child,
        }
    }

    /// `ok`, `500` or `garbage` from the next request on.
    pub fn set_mode(&self, mode: &str) {
        std::fs::write(self.certs.join("mode"), mode).unwrap();
    }

    /// Stops the server: the catalog is down.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpsCatalog {
    fn drop(&mut self) {
        self.stop();
    }
}
