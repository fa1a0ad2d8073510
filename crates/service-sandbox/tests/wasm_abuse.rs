//! Abuse of the `wasm` plane: each attack is reproduced by a hostile module and must end in its
//! stable refusal code, bounded in time, with the host handler untouched and the service still
//! answering the next call (a fresh instance per call).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use service_sandbox::{Limits, SandboxError, ServiceSpec, WasmLimits, WasmService};

type Calls = Arc<Mutex<Vec<String>>>;

/// A handler that records every request reaching the host.
fn recording() -> (Calls, service_sandbox::channel::HostHandler) {
    let calls: Calls = Arc::default();
    let c = calls.clone();
    (
        calls,
        Box::new(move |m: &str, p: Value| {
            c.lock().unwrap().push(m.to_string());
            Ok(json!({"echo": m, "params": p}))
        }),
    )
}

/// A module with the ABI exports (`memory`, a bump `alloc`) around `body` (the `handle` function
/// body) and `extra` (imports, data, more functions).
fn module(extra: &str, body: &str) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module {extra}
          (memory (export "memory") 1)
          (global $heap (mut i32) (i32.const 4096))
          (func $alloc (export "alloc") (param $n i32) (result i32)
            (local $p i32)
            (local.set $p (global.get $heap))
            (global.set $heap (i32.add (local.get $p) (local.get $n)))
            (local.get $p))
          (func (export "handle") (param $ptr i32) (param $len i32) (result i64) {body}))"#
    ))
    .unwrap()
}

/// `handle` answering `{"jsonrpc":"2.0","id":1,"result":1}` from a data segment.
const OK_REPLY: &str = r#"(data (i32.const 0) "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}")"#;
const OK_BODY: &str = "(i64.const 35)";

fn load(bytes: &[u8], limits: WasmLimits) -> Result<(WasmService, Calls), SandboxError> {
    let (calls, handler) = recording();
    WasmService::from_bytes(bytes, limits, handler).map(|s| (s, calls))
}

fn refusal(bytes: &[u8]) -> SandboxError {
    match load(bytes, WasmLimits::default()) {
        Ok(_) => panic!("module was accepted"),
        Err(e) => e,
    }
}

const T: Duration = Duration::from_secs(5);

#[test]
fn a_well_behaved_module_answers() {
    let (mut svc, calls) = load(&module(OK_REPLY, OK_BODY), WasmLimits::default()).unwrap();
    assert_eq!(svc.call("x", json!({}), T).unwrap(), json!(1));
    assert!(calls.lock().unwrap().is_empty());
}

#[test]
fn an_infinite_loop_runs_out_of_fuel() {
    let bytes = module("", "(loop $l (br $l)) (i64.const 0)");
    let limits = WasmLimits {
        fuel_per_call: 50_000_000,
        ..WasmLimits::default()
    };
    let (mut svc, calls) = load(&bytes, limits).unwrap();
    let t0 = Instant::now();
    let err = svc
        .call("spin", json!({}), Duration::from_secs(60))
        .unwrap_err();
    assert_eq!(err.code(), "service.wasm_fuel_exhausted", "{err}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(calls.lock().unwrap().is_empty());
    assert!(svc.logs().contains("service.wasm_fuel_exhausted"));
}

#[test]
fn an_infinite_loop_with_fuel_to_spare_hits_the_deadline() {
    let bytes = module("", "(loop $l (br $l)) (i64.const 0)");
    let limits = WasmLimits {
        fuel_per_call: u64::MAX,
        fuel_slice: 1_000_000,
        ..WasmLimits::default()
    };
    let (mut svc, _) = load(&bytes, limits).unwrap();
    let t0 = Instant::now();
    let err = svc
        .call("spin", json!({}), Duration::from_millis(200))
        .unwrap_err();
    assert_eq!(err.code(), "service.timeout");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

#[test]
fn a_memory_bomb_hits_the_memory_limit() {
    // grow one page at a time until refused, then trap
    let bomb = "(block $done (loop $l (br_if $done (i32.lt_s (memory.grow (i32.const 1)) (i32.const 0))) (br $l))) unreachable";
    let limits = WasmLimits {
        memory_bytes: 4 << 20,
        ..WasmLimits::default()
    };
    let (mut svc, calls) = load(&module("", bomb), limits).unwrap();
    let err = svc.call("bomb", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.wasm_memory_limit", "{err}");
    assert!(calls.lock().unwrap().is_empty());
    // a module that copes with the refused grow still gets the limit code
    let polite = format!("(drop (memory.grow (i32.const 1000))) {OK_BODY}");
    let (mut svc, _) = load(&module(OK_REPLY, &polite), limits).unwrap();
    let err = svc.call("grow", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.wasm_memory_limit", "{err}");
}

#[test]
fn a_declared_memory_over_the_limit_is_refused_at_instantiation() {
    let bytes = wat::parse_str(
        r#"(module (memory (export "memory") 2000)
            (func (export "alloc") (param i32) (result i32) (i32.const 0))
            (func (export "handle") (param i32 i32) (result i64) (i64.const 0)))"#,
    )
    .unwrap();
    let (mut svc, _) = load(&bytes, WasmLimits::default()).unwrap();
    let err = svc.call("x", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.wasm_memory_limit", "{err}");
}

#[test]
fn a_huge_module_is_refused_by_size_before_parsing() {
    let mut bytes = module(OK_REPLY, OK_BODY);
    bytes.resize(9 << 20, 0);
    assert_eq!(refusal(&bytes).code(), "service.wasm_module_too_large");
    // the same from a package file: refused by its size, never read whole
    let pkg = tempfile::tempdir().unwrap();
    std::fs::write(pkg.path().join("big.wasm"), &bytes).unwrap();
    let spec = spec_in(pkg.path().to_path_buf(), "/app/big.wasm");
    let (_, handler) = recording();
    let err = WasmService::load(&spec, WasmLimits::default(), handler)
        .err()
        .unwrap();
    assert_eq!(err.code(), "service.wasm_module_too_large");
}

#[test]
fn malformed_and_invalid_modules_are_refused_before_instantiation() {
    let good = module(OK_REPLY, OK_BODY);
    for bytes in [
        b"not wasm at all".to_vec(),
        good[..good.len() / 2].to_vec(),
        vec![0, b'a', b's', b'm', 1, 0, 0, 0, 0xff, 0xff],
        // validation: the body returns the wrong type
        module("", "(i32.const 1)"),
    ] {
        assert_eq!(refusal(&bytes).code(), "service.wasm_invalid_module");
    }
}

#[test]
fn unknown_and_wasi_imports_are_refused() {
    let wasi = r#"(import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))"#;
    let err = refusal(&module(&format!("{wasi} {OK_REPLY}"), OK_BODY));
    assert_eq!(err.code(), "service.wasm_import_refused");
    assert!(err.to_string().contains("WASI is not provided"), "{err}");
    for extra in [
        r#"(import "env" "system" (func (param i32) (result i32)))"#,
        r#"(import "env" "counter" (global i32))"#,
        r#"(import "lime" "clock" (func (result i64)))"#,
        // the right name with the wrong type
        r#"(import "lime" "lime_call" (func (param i32) (result i32)))"#,
    ] {
        let err = refusal(&module(&format!("{extra} {OK_REPLY}"), OK_BODY));
        assert_eq!(err.code(), "service.wasm_import_refused", "{extra}: {err}");
    }
}

#[test]
fn missing_or_mistyped_exports_break_the_abi() {
    for bytes in [
        wat::parse_str(r#"(module (func (export "handle") (param i32 i32) (result i64) (i64.const 0)))"#).unwrap(),
        wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "handle") (param i32 i32) (result i64) (i64.const 0)))"#).unwrap(),
        wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "alloc") (param i32) (result i32) (i32.const 0)) (func (export "handle") (param i32) (result i32) (i32.const 0)))"#).unwrap(),
    ] {
        assert_eq!(refusal(&bytes).code(), "service.wasm_abi");
    }
}

#[test]
fn a_trap_mid_call_fails_that_call_only() {
    // traps when the request is long (the "boom" call), answers otherwise
    let body =
        format!("(if (i32.gt_u (local.get $len) (i32.const 80)) (then unreachable)) {OK_BODY}");
    let (mut svc, _) = load(&module(OK_REPLY, &body), WasmLimits::default()).unwrap();
    let err = svc
        .call("boom", json!({"pad": "x".repeat(100)}), T)
        .unwrap_err();
    assert_eq!(err.code(), "service.wasm_trap", "{err}");
    // the next call gets a fresh instance and the right id
    let (mut svc, _) = load(&module(OK_REPLY, &body), WasmLimits::default()).unwrap();
    assert_eq!(svc.call("x", json!({}), T).unwrap(), json!(1));
    let err = svc
        .call("boom", json!({"pad": "x".repeat(100)}), T)
        .unwrap_err();
    assert_eq!(err.code(), "service.wasm_trap");
}

#[test]
fn an_output_flood_or_wild_pointer_is_refused() {
    // 2 MiB answer (over the 1 MiB message cap) after growing memory to hold it
    let flood = "(drop (memory.grow (i32.const 40))) (i64.const 2097152)";
    let (mut svc, _) = load(&module("", flood), WasmLimits::default()).unwrap();
    assert_eq!(
        svc.call("x", json!({}), T).unwrap_err().code(),
        "service.protocol"
    );
    // a length of 4 GiB - 1
    let (mut svc, _) = load(&module("", "(i64.const 0xffffffff)"), WasmLimits::default()).unwrap();
    assert_eq!(
        svc.call("x", json!({}), T).unwrap_err().code(),
        "service.protocol"
    );
    // a pointer past the end of memory
    let (mut svc, _) = load(
        &module("", "(i64.const 0x7fff000000000010)"),
        WasmLimits::default(),
    )
    .unwrap();
    assert_eq!(
        svc.call("x", json!({}), T).unwrap_err().code(),
        "service.wasm_abi"
    );
    // not JSON / another id
    let junk = r#"(data (i32.const 0) "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":1} garbage")"#;
    let (mut svc, _) = load(&module(junk, "(i64.const 35)"), WasmLimits::default()).unwrap();
    assert_eq!(
        svc.call("x", json!({}), T).unwrap_err().code(),
        "service.protocol"
    );
}

/// `handle` sends the request at offset 0 (length `len`) through `lime_call` and answers
/// `{"jsonrpc":"2.0","id":1,"result":<the host's JSON-RPC answer>}`.
fn lime_caller(request: &str, times: u32) -> Vec<u8> {
    let escaped = request.replace('\\', "\\\\").replace('"', "\\\"");
    let len = request.len();
    let extra = format!(
        r#"(import "lime" "lime_call" (func $lime (param i32 i32) (result i64)))
           (data (i32.const 0) "{escaped}")
           (data (i32.const 2048) "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":")"#
    );
    let body = format!(
        r#"(local $r i64) (local $n i32) (local $out i32) (local $i i32)
           (loop $again
             (local.set $r (call $lime (i32.const 0) (i32.const {len})))
             (local.set $i (i32.add (local.get $i) (i32.const 1)))
             (br_if $again (i32.lt_u (local.get $i) (i32.const {times}))))
           (local.set $n (i32.wrap_i64 (local.get $r)))
           (local.set $out (call $alloc (i32.add (local.get $n) (i32.const 34))))
           (memory.copy (local.get $out) (i32.const 2048) (i32.const 33))
           (memory.copy (i32.add (local.get $out) (i32.const 33))
                        (i32.wrap_i64 (i64.shr_u (local.get $r) (i64.const 32))) (local.get $n))
           (i32.store8 (i32.add (local.get $out) (i32.add (local.get $n) (i32.const 33))) (i32.const 125))
           (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
                   (i64.extend_i32_u (i32.add (local.get $n) (i32.const 34))))"#
    );
    module(&extra, &body)
}

#[test]
fn lime_call_reaches_the_host_handler_with_lime_methods_only() {
    let req = r#"{"jsonrpc":"2.0","id":7,"method":"lime.storage.get","params":{"key":"k"}}"#;
    let (mut svc, calls) = load(&lime_caller(req, 1), WasmLimits::default()).unwrap();
    let out = svc.call("go", json!({}), T).unwrap();
    assert_eq!(
        out,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"echo": "lime.storage.get", "params": {"key": "k"}}})
    );
    assert_eq!(*calls.lock().unwrap(), vec!["lime.storage.get".to_string()]);
    // anything but lime.* is answered -32601 and never reaches the host
    let req = r#"{"jsonrpc":"2.0","id":8,"method":"fs.read","params":{"path":"/etc/shadow"}}"#;
    let (mut svc, calls) = load(&lime_caller(req, 1), WasmLimits::default()).unwrap();
    let out = svc.call("go", json!({}), T).unwrap();
    assert_eq!(out["error"]["code"], json!(-32601));
    assert!(calls.lock().unwrap().is_empty());
}

#[test]
fn a_lime_call_flood_is_cut_off() {
    let req = r#"{"jsonrpc":"2.0","id":7,"method":"lime.storage.get","params":{}}"#;
    let (mut svc, calls) = load(&lime_caller(req, 1000), WasmLimits::default()).unwrap();
    let err = svc.call("go", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.protocol", "{err}");
    assert_eq!(
        calls.lock().unwrap().len(),
        WasmLimits::default().max_host_calls
    );
}

fn spec_in(package_dir: PathBuf, program: &str) -> ServiceSpec {
    ServiceSpec {
        package_dir,
        service_dir: std::env::temp_dir(),
        program: vec![program.into()],
        network: false,
        limits: Limits::default(),
        shim: PathBuf::new(),
        bwrap: PathBuf::new(),
    }
}

#[test]
fn a_module_path_outside_the_package_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let pkg = root.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(root.path().join("outside.wasm"), module(OK_REPLY, OK_BODY)).unwrap();
    std::os::unix::fs::symlink(root.path().join("outside.wasm"), pkg.join("link.wasm")).unwrap();
    for program in [
        "/app/../outside.wasm",
        "/app/link.wasm",
        "/usr/lib/x.wasm",
        "relative.wasm",
        "/app/missing.wasm",
    ] {
        let (_, handler) = recording();
        let err = WasmService::load(
            &spec_in(pkg.clone(), program),
            WasmLimits::default(),
            handler,
        )
        .err()
        .unwrap_or_else(|| panic!("{program} accepted"));
        assert_eq!(err.code(), "service.invalid_spec", "{program}: {err}");
    }
}

#[test]
fn the_supervisor_picks_the_wasm_plane_from_the_manifest_and_audits_a_fuel_limit() {
    use service_sandbox::{AuditEvent, Health, Plane, Policy, Supervisor};
    assert_eq!(
        Plane::for_manifest("cloud-remote", "remote-http")
            .unwrap_err()
            .code(),
        "service.runtime_unavailable"
    );
    let pkg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(pkg.path().join("services")).unwrap();
    // answers `initialize` (short request), spins on anything longer
    let body = format!(
        "(if (i32.gt_u (local.get $len) (i32.const 80)) (then (loop $l (br $l)))) {OK_BODY}"
    );
    std::fs::write(pkg.path().join("services/m.wasm"), module(OK_REPLY, &body)).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    let plane = match Plane::for_manifest("client-local", "wasm").unwrap() {
        Plane::Wasm(l) => Plane::Wasm(WasmLimits {
            fuel_per_call: 20_000_000,
            ..l
        }),
        other => panic!("{other:?}"),
    };
    let mut sup = Supervisor::new(
        spec_in(pkg.path().to_path_buf(), "/app/services/m.wasm"),
        Policy {
            backoff_base: Duration::ZERO,
            ..Policy::default()
        },
        pkg.path().join("logs/m.log"),
        Box::new(|| recording().1),
        Box::new(move |e: AuditEvent| ev.lock().unwrap().push(e)),
    )
    .with_plane(plane);
    sup.start().unwrap(); // `initialize` (id 1) answered
    let err = sup
        .call("spin", json!({"pad": "x".repeat(100)}))
        .unwrap_err();
    assert_eq!(err.code(), "service.wasm_fuel_exhausted");
    let events = events.lock().unwrap();
    assert!(matches!(
        events.first(),
        Some(AuditEvent::Started { pid: 0 })
    ));
    assert!(
        events.iter().any(
            |e| matches!(e, AuditEvent::LimitHit { what } if what.contains("wasm_fuel_exhausted"))
        ),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, AuditEvent::Crashed { .. })));
    assert!(matches!(sup.health(), Health::Degraded(_)));
}

#[test]
fn endless_recursion_traps_without_touching_the_host_stack() {
    let extra =
        "(func $deep (param i32) (result i32) (call $deep (i32.add (local.get 0) (i32.const 1))))";
    let (mut svc, _) = load(
        &module(extra, "(drop (call $deep (i32.const 0))) (i64.const 0)"),
        WasmLimits::default(),
    )
    .unwrap();
    let err = svc.call("deep", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.wasm_trap", "{err}");
}

#[test]
fn a_supervised_wasm_service_can_move_between_threads() {
    fn assert_send<S: Send>() {}
    assert_send::<service_sandbox::Supervisor>();
    assert_send::<WasmService>();
}
