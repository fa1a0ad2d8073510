//! The zip reader: arbitrary bytes are written to a temporary `.zip`, resolved as a package
//! source, listed (`PackageReader::open`) and read (`pipeline::read_package`) with small
//! limits, then the captured manifest is loaded. Nothing may panic, and what is read must
//! agree with what was listed.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use host_core::foundation::hashing::Sha256Bytes;
use host_core::foundation::limits::Limits;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::pipeline::{read_package, BlobSink};
use host_core::install::package::source::resolve;
use host_core::install::package::PackageReader;
use host_core::{install::manifest, HostResult};
use libfuzzer_sys::fuzz_target;

/// Checks that every file arrives whole: the bytes written add up to the listed size.
#[derive(Default)]
struct CheckingSink {
    files: Vec<(String, u64)>,
    current: Option<(String, u64, u64)>,
}

impl BlobSink for CheckingSink {
    fn begin(&mut self, path: &str, size: u64) -> HostResult<()> {
        assert!(self.current.is_none(), "begin inside a file");
        self.current = Some((path.to_owned(), size, 0));
        Ok(())
    }
    fn write(&mut self, data: &[u8]) -> HostResult<()> {
        let cur = self.current.as_mut().expect("write outside a file");
        cur.2 += data.len() as u64;
        Ok(())
    }
    fn end(&mut self, _sha256: &Sha256Bytes) -> HostResult<()> {
        let (path, size, got) = self.current.take().expect("end outside a file");
        assert_eq!(size, got, "{path}: listed {size} bytes, received {got}");
        self.files.push((path, size));
        Ok(())
    }
}

fn zip_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        dir.join(format!("apphost-fuzz-archive-{}.zip", std::process::id()))
    })
}

fn small_limits() -> Limits {
    Limits {
        max_manifest_bytes: 64 * 1024,
        max_metadata_bytes: 256 * 1024,
        max_files: 64,
        max_unpacked_bytes: 4 * 1024 * 1024,
        max_compression_ratio: 200,
        ratio_floor_bytes: 64 * 1024,
        max_yaml_depth: 64,
        max_yaml_nodes: 10_000,
        max_yaml_alias_bytes: 64 * 1024,
    }
}

fuzz_target!(|data: &[u8]| {
    let path = zip_path();
    std::fs::write(path, data).expect("cannot write the temporary zip");
    let limits = small_limits();
    let Ok(source) = resolve(path, &CatalogSelect::default()) else {
        return;
    };
    let Ok(mut reader) = PackageReader::open(&source, &limits) else {
        return;
    };
    let listed: Vec<(String, u64)> = reader
        .listing()
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.size))
        .collect();
    assert!(listed.len() <= limits.max_files);
    assert!(listed.iter().map(|e| e.1).sum::<u64>() <= limits.max_unpacked_bytes);
    let mut sink = CheckingSink::default();
    let Ok(read) = read_package(
        &mut reader,
        Some(&mut sink),
        &limits,
        &mut |_| {},
    ) else {
        return;
    };
    assert_eq!(sink.files, listed, "files read differ from files listed");
    assert_eq!(read.files.len(), listed.len());
    let captured: u64 = read.captured.values().map(|b| b.len() as u64).sum();
    assert!(captured <= limits.metadata_budget(), "captured {captured} bytes");
    let _ = manifest::load_with_files(
        &read.captured,
        read.files.iter().map(|f| f.path.as_str()),
        &limits,
    );
});
