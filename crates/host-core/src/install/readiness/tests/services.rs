//! Backend services: `ready` when the plan runs here and the host has every sandbox layer and
//! the interpreter; each missing piece blocks (required) or degrades (optional) with a stable
//! code and, for a host gap, a setup action naming it.

use super::*;

const PY: &str = "services:\n  - {key: parser, kind: app-backend, executionPlane: client-local, protocol: stdio-jsonrpc, command: [python3, svc/main.py], required: true}\n";
const FILES: &[(&str, &str)] = &[("svc/main.py", "print(1)")];

fn host(sandbox_missing: Option<&str>, runtimes: &[&str]) -> HostState {
    let mut s = HostState::preview(now());
    s.services = ServiceFacts {
        sandbox_missing: sandbox_missing.map(str::to_owned),
        runtimes: runtimes.iter().map(|r| r.to_string()).collect(),
        health: Default::default(),
        network_granted: Default::default(),
        remote_allowed: Default::default(),
        disk_over: Default::default(),
        policy: None,
    };
    s
}

fn service_check(r: &Report) -> &Check {
    r.checks
        .iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap()
}

#[test]
fn a_stdio_service_is_ready_with_the_sandbox_and_its_interpreter() {
    let r = run(
        PY,
        FILES,
        &HostProfile::current(),
        &host(None, &["/usr/bin/python3"]),
    );
    let c = service_check(&r);
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn a_missing_layer_blocks_with_a_setup_action_naming_it() {
    let state = host(Some("Landlock ABI 1 < 3"), &["/usr/bin/python3"]);
    let r = run(PY, FILES, &HostProfile::current(), &state);
    let c = service_check(&r);
    assert_eq!(c.code, Some("service.sandbox_unavailable"));
    assert_eq!(r.status, Status::Blocked);
    let a = c.setup_action.as_ref().unwrap();
    assert_eq!(a.target.as_deref(), Some("Landlock ABI 1 < 3"));
    assert_eq!(a.kind, "service-setup");
}

#[test]
fn a_missing_interpreter_blocks_a_required_service_and_degrades_an_optional_one() {
    let r = run(PY, FILES, &HostProfile::current(), &host(None, &[]));
    assert_eq!(service_check(&r).code, Some("service.runtime_unavailable"));
    assert_eq!(r.status, Status::Blocked);
    let optional = PY.replace("required: true", "required: false");
    let r = run(&optional, FILES, &HostProfile::current(), &host(None, &[]));
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn a_crash_loop_blocks_a_required_service_and_a_recent_crash_degrades() {
    let mut state = host(None, &["/usr/bin/python3"]);
    state
        .services
        .health
        .insert("parser".into(), (true, "5 crashes".into()));
    let r = run(PY, FILES, &HostProfile::current(), &state);
    assert_eq!(service_check(&r).code, Some("service.crash_loop"));
    assert_eq!(r.status, Status::Blocked);
    state
        .services
        .health
        .insert("parser".into(), (false, "1 crash".into()));
    let r = run(PY, FILES, &HostProfile::current(), &state);
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn a_service_over_its_disk_quota_blocks_with_an_action_to_free_space() {
    let mut state = host(None, &["/usr/bin/python3"]);
    state
        .services
        .disk_over
        .insert("parser".into(), "300 bytes used of a 200 byte quota".into());
    // the quota outranks a crash record: freeing space is what the user must do first
    state
        .services
        .health
        .insert("parser".into(), (false, "1 crash".into()));
    let r = run(PY, FILES, &HostProfile::current(), &state);
    let c = service_check(&r);
    assert_eq!(c.code, Some("service.disk_quota_exceeded"));
    assert_eq!(c.outcome, Outcome::Blocked);
    assert!(c.message.contains("disk quota"), "{}", c.message);
    let a = c.setup_action.as_ref().expect("a setup action");
    assert_eq!(a.kind, "service-setup");
    let target = a.target.as_deref().unwrap_or_default();
    assert!(
        target.starts_with("apphost services reset ") && target.ends_with(" parser --delete-data"),
        "{target}"
    );
    assert_eq!(r.status, Status::Blocked);
    // optional: the app runs degraded
    let optional = PY.replace("required: true", "required: false");
    let r = run(&optional, FILES, &HostProfile::current(), &state);
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn remote_services_stay_blocked_with_their_reasons() {
    let ok = host(None, &["/usr/bin/python3"]);
    for (edit, code) in [
        ("executionPlane: cloud-remote", "service.remote_not_allowed"),
        ("protocol: remote-http", "service.remote_not_allowed"),
    ] {
        let front = PY
            .replace("protocol: stdio-jsonrpc", "protocol: PROTO")
            .replace("executionPlane: client-local", "executionPlane: PLANE");
        let front = if edit.starts_with("protocol") {
            front
                .replace("protocol: PROTO", edit)
                .replace("executionPlane: PLANE", "executionPlane: client-local")
        } else {
            front
                .replace("executionPlane: PLANE", edit)
                .replace("protocol: PROTO", "protocol: stdio-jsonrpc")
        };
        let r = run(&front, FILES, &HostProfile::current(), &ok);
        assert_eq!(service_check(&r).code, Some(code), "{edit}");
        assert_eq!(r.status, Status::Blocked, "{edit}");
    }
    // Declared server-assisted, but cloud-remote over stdio-jsonrpc: not a valid remote
    // service (the full declaration is in `remote_services.rs`).
    let front = format!(
        "runtimeTargets: [local, server-assisted]\n{}",
        PY.replace(
            "executionPlane: client-local",
            "executionPlane: cloud-remote, endpoint: \"https://api.example.com\""
        )
    );
    let r = run(&front, FILES, &HostProfile::current(), &ok);
    let c = service_check(&r);
    assert_eq!(c.code, Some("service.invalid_spec"));
    assert!(c.message.contains("remote-http"), "{}", c.message);
}

const WASM: &str = "services:\n  - {key: transform, kind: app-backend, executionPlane: client-local, protocol: wasm, entry: svc/t.wasm, required: true, resourceLimits: {memoryMb: 16}}\n";
const WASM_FILES: &[(&str, &str)] = &[("svc/t.wasm", "\0asm")];

#[test]
fn a_wasm_service_is_ready_without_sandbox_layers_or_an_interpreter() {
    let r = run(
        WASM,
        WASM_FILES,
        &HostProfile::current(),
        &host(Some("Landlock ABI 1 < 3"), &[]),
    );
    let c = service_check(&r);
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn a_wasm_service_must_name_a_package_module_and_nothing_else() {
    let ok = host(None, &["/usr/bin/python3"]);
    for front in [
        WASM.replace("entry: svc/t.wasm", "entry: svc/missing.wasm"),
        WASM.replace("entry: svc/t.wasm", "command: [python3, svc/t.wasm]"),
        WASM.replace("entry: svc/t.wasm", "command: [svc/t.wasm, --flag]"),
    ] {
        let r = run(&front, WASM_FILES, &HostProfile::current(), &ok);
        assert_eq!(
            service_check(&r).code,
            Some("service.invalid_spec"),
            "{front}"
        );
        assert_eq!(r.status, Status::Blocked, "{front}");
    }
}

#[test]
fn a_local_http_service_needs_the_sandbox_and_its_interpreter_like_stdio() {
    let front = PY.replace("protocol: stdio-jsonrpc", "protocol: local-http");
    let r = run(
        &front,
        FILES,
        &HostProfile::current(),
        &host(None, &["/usr/bin/python3"]),
    );
    assert_eq!(service_check(&r).outcome, Outcome::Pass);
    assert_eq!(r.status, Status::Ready);
    let state = host(Some("Landlock ABI 1 < 3"), &["/usr/bin/python3"]);
    let r = run(&front, FILES, &HostProfile::current(), &state);
    assert_eq!(service_check(&r).code, Some("service.sandbox_unavailable"));
    assert_eq!(r.status, Status::Blocked);
    let r = run(&front, FILES, &HostProfile::current(), &host(None, &[]));
    assert_eq!(service_check(&r).code, Some("service.runtime_unavailable"));
}

#[test]
fn a_command_outside_the_package_or_with_odd_arguments_is_refused() {
    let ok = host(None, &["/usr/bin/python3", "/usr/bin/node"]);
    for cmd in [
        "[bash, -c, evil]",
        "[python3, ../../etc/passwd]",
        "[python3, /etc/passwd]",
        "[python3, \"svc/main.py; rm -rf /\"]",
        "[svc/missing]",
    ] {
        let front = PY.replace("[python3, svc/main.py]", cmd);
        let r = run(&front, FILES, &HostProfile::current(), &ok);
        assert_eq!(
            service_check(&r).code,
            Some("service.invalid_spec"),
            "{cmd}"
        );
    }
}

const REMOTE: &str = "services:\n  - {key: fetcher, kind: app-backend, executionPlane: client-local, protocol: stdio-jsonrpc, command: [python3, svc/main.py], required: true, network: remote-allowed, allowedDomains: [api.example.com]}\n";

#[test]
fn a_remote_allowed_service_needs_setup_until_granted_with_an_action_naming_the_command() {
    let mut state = host(None, &["/usr/bin/python3"]);
    let r = run(REMOTE, FILES, &HostProfile::current(), &state);
    let c = service_check(&r);
    assert_eq!(c.outcome, Outcome::NeedsSetup, "{c:?}");
    assert_eq!(c.code, Some("service.network_not_granted"));
    assert_eq!(r.status, Status::NeedsSetup);
    let a = c.setup_action.as_ref().unwrap();
    let target = a.target.as_deref().unwrap();
    assert!(
        target.starts_with("apphost services grant-network "),
        "{target}"
    );
    assert!(target.ends_with(" fetcher"), "{target}");
    // Another service's grant does not count.
    state.services.network_granted.insert("other".into());
    let r = run(REMOTE, FILES, &HostProfile::current(), &state);
    assert_eq!(r.status, Status::NeedsSetup);
    state.services.network_granted.insert("fetcher".into());
    let r = run(REMOTE, FILES, &HostProfile::current(), &state);
    assert_eq!(service_check(&r).outcome, Outcome::Pass);
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn a_remote_allowed_service_without_domains_or_on_another_protocol_is_refused() {
    let state = host(None, &["/usr/bin/python3"]);
    for (manifest, code) in [
        (
            REMOTE.replace("allowedDomains: [api.example.com]", "allowedDomains: []"),
            "service.invalid_spec",
        ),
        (
            REMOTE.replace(", allowedDomains: [api.example.com]", ""),
            "service.invalid_spec",
        ),
        (
            REMOTE.replace(
                "allowedDomains: [api.example.com]",
                "allowedDomains: [\"10.0.0.1\", \"a b\"]",
            ),
            "service.invalid_spec",
        ),
        (
            REMOTE.replace("protocol: stdio-jsonrpc", "protocol: local-http"),
            "service.network_not_granted",
        ),
        (
            REMOTE.replace("protocol: stdio-jsonrpc", "protocol: wasm"),
            "service.network_not_granted",
        ),
    ] {
        let r = run(&manifest, FILES, &HostProfile::current(), &state);
        let c = service_check(&r);
        assert_eq!(c.code, Some(code), "{manifest}: {c:?}");
        assert_eq!(r.status, Status::Blocked, "{manifest}");
    }
}

fn policy(json: &str) -> Option<std::sync::Arc<crate::install::services_policy::ServicesPolicy>> {
    Some(std::sync::Arc::new(
        crate::install::services_policy::ServicesPolicy::from_bytes(
            "/data/policy/services.json".into(),
            json.as_bytes(),
        ),
    ))
}

#[test]
fn the_admin_policy_denies_network_whatever_the_grant_with_no_setup_action() {
    let mut state = host(None, &["/usr/bin/python3"]);
    state.services.network_granted.insert("fetcher".into());
    for json in [
        r#"{"network": {"allow": false}}"#,
        r#"{"deny": ["demo/fetcher"]}"#,
        r#"{"network": {"denyApps": ["demo"]}}"#,
        "{not json",
    ] {
        state.services.policy = policy(json);
        let r = run(REMOTE, FILES, &HostProfile::current(), &state);
        let c = service_check(&r);
        assert_eq!(c.outcome, Outcome::Blocked, "{json}: {c:?}");
        assert_eq!(c.code, Some("service.policy_denied"), "{json}");
        assert!(
            c.message.contains("/data/policy/services.json"),
            "{}",
            c.message
        );
        assert!(c.setup_action.is_none(), "{json}: {c:?}");
        assert_eq!(r.status, Status::Blocked, "{json}");
        // Optional: only degraded.
        let optional = REMOTE.replace("required: true", "required: false");
        let r = run(&optional, FILES, &HostProfile::current(), &state);
        assert_eq!(service_check(&r).outcome, Outcome::Degraded, "{json}");
    }
    // Rules that do not concern this app, or only remote endpoints, leave the grant deciding.
    for json in [
        "{}",
        r#"{"network": {"allow": false, "allowApps": ["demo"]}}"#,
        r#"{"deny": ["other/fetcher", "demo/other"]}"#,
        r#"{"remote": {"allow": false}}"#,
    ] {
        state.services.policy = policy(json);
        let r = run(REMOTE, FILES, &HostProfile::current(), &state);
        assert_eq!(r.status, Status::Ready, "{json}: {r:?}");
    }
}
