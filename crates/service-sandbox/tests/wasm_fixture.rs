//! The Wasm fixtures ship their `.wasm` next to the `.wat` they are built from; this test rebuilds
//! each with the `wat` crate and fails when the committed binary differs
//! (`APPHOST_BLESS=1` rewrites it). It also runs the sample app's transform end to end.

mod common;

use std::time::Duration;

use common::{apps, load_transform};
use serde_json::json;

#[test]
fn committed_wasm_matches_its_wat_source() {
    let wat = apps().join("wasm-transform/services/transform/transform.wat");
    let wasm = wat.with_extension("wasm");
    let built = wat::parse_file(&wat).expect("transform.wat compiles");
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::write(&wasm, &built).unwrap();
    }
    let committed = std::fs::read(&wasm).expect("transform.wasm committed");
    assert!(
        committed == built,
        "{} is stale: rebuild with APPHOST_BLESS=1",
        wasm.display()
    );
}

#[test]
fn the_sample_transform_upper_cases_text_and_keeps_escapes_valid() {
    let mut svc = load_transform();
    let t = Duration::from_secs(2);
    let out = svc
        .call("upper", json!({"text": "héllo \"wörld\" \\ a\nb"}), t)
        .unwrap();
    assert_eq!(out, json!({"text": "HéLLO \"WöRLD\" \\ A\nB"}));
    // each call is a fresh instance: the bump allocator starts over, the answer is the same
    for _ in 0..3 {
        assert_eq!(
            svc.call("upper", json!({"text": "abc"}), t).unwrap(),
            json!({"text": "ABC"})
        );
    }
    assert_eq!(
        svc.call("initialize", json!({"host": "apphost"}), t)
            .unwrap(),
        json!({"text": ""})
    );
}
