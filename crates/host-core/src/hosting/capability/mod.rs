//! Capability calls: the one choke point every `lime.*` call passes, whatever its transport.
//! [`decision`] is the pure decision table (declared ∩ ready ∩ granted ∩ policy, deny wins).
//!
//! The choke point knows no transport: it takes a [`Call`] from a [`Caller`] (`call.rs`), which
//! the Host Bridge builds today and the workflow runtime and backend services will build
//! tomorrow; it parses the call's names once into a typed [`Method`] (`registry.rs`), and every
//! refusal carries a typed [`ErrorCode`] (`code.rs`). Nothing in this module imports the bridge
//! (`tests::no_bridge_imports`).

pub mod call;
pub mod code;
pub mod contract;
pub mod decision;
pub mod dispatch;
pub mod facts;
pub mod method;
pub mod projections;
pub mod registry;
pub mod services;

pub use call::{Call, Caller};
pub use code::ErrorCode;
pub use method::{Capability, Method, Namespace};

#[cfg(test)]
mod tests {
    /// The choke point must stay transport-free: no source file under `capability/` may name
    /// the bridge module (a `use`, a path or a re-export).
    #[test]
    fn no_bridge_imports() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).expect("read capability/") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hosting/capability");
        let mut files = Vec::new();
        walk(&root, &mut files);
        assert!(files.len() >= 10, "found {files:?}");
        let needle = ["bridge", "::"].concat();
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read source");
            for (n, line) in text.lines().enumerate() {
                assert!(
                    !line.contains(&needle),
                    "{}:{} names the bridge: {line}",
                    f.display(),
                    n + 1
                );
            }
        }
    }
}
