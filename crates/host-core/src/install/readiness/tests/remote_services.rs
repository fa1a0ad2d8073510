//! `server-assisted` remote services: blocked (required) or degraded (optional) with
//! `service.remote_not_allowed`, the data boundary and a setup action until the user allowed
//! the service for its endpoint's origin; an allowance for another origin does not count; an
//! auth secret that `secrets[]` does not declare is `service.invalid_spec`.

use super::*;

const SVC: &str = "runtimeTargets: [local, server-assisted]\nsecrets:\n  - {key: tok, required: false}\nservices:\n  - {key: summarize, kind: app-backend, executionPlane: cloud-remote, protocol: remote-http, endpoint: \"https://api.example.com/rpc\", auth: {kind: bearer, secret: tok}, dataBoundary: \"Sends the text you select.\", required: true}\n";

fn state() -> HostState {
    let mut s = HostState::preview(now());
    // Remote services need no sandbox: a host without one still runs them.
    s.services.sandbox_missing = Some("Landlock ABI 3".into());
    s
}

fn check(r: &Report) -> &Check {
    r.checks
        .iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap()
}

#[test]
fn a_remote_service_is_blocked_until_allowed_with_its_boundary_and_the_command() {
    let r = run(SVC, &[], &HostProfile::current(), &state());
    let c = check(&r);
    assert_eq!(c.outcome, Outcome::Blocked, "{c:?}");
    assert_eq!(c.code, Some("service.remote_not_allowed"));
    assert!(c.message.contains("policy"), "{}", c.message);
    assert!(
        c.message.contains("https://api.example.com"),
        "{}",
        c.message
    );
    assert!(
        c.message.contains("Sends the text you select."),
        "{}",
        c.message
    );
    let a = c.setup_action.as_ref().unwrap();
    assert_eq!(a.kind, "service-setup");
    assert_eq!(
        a.target.as_deref(),
        Some("apphost services allow-remote demo summarize")
    );
    assert_eq!(r.status, Status::Blocked);
}

#[test]
fn an_allowance_counts_only_for_the_declared_origin() {
    let mut st = state();
    st.services
        .remote_allowed
        .insert("summarize".into(), "https://evil.example.com".into());
    let r = run(SVC, &[], &HostProfile::current(), &st);
    let c = check(&r);
    assert_eq!(c.code, Some("service.remote_not_allowed"));
    assert!(
        c.message
            .contains("it was allowed for https://evil.example.com"),
        "{}",
        c.message
    );
    st.services
        .remote_allowed
        .insert("other".into(), "https://api.example.com".into());
    assert_eq!(
        run(SVC, &[], &HostProfile::current(), &st).status,
        Status::Blocked
    );
    st.services
        .remote_allowed
        .insert("summarize".into(), "https://api.example.com".into());
    let r = run(SVC, &[], &HostProfile::current(), &st);
    assert_eq!(check(&r).outcome, Outcome::Pass, "{:?}", check(&r));
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn an_optional_remote_service_only_degrades() {
    let front = SVC.replace("required: true}", "required: false}");
    let r = run(&front, &[], &HostProfile::current(), &state());
    assert_eq!(check(&r).outcome, Outcome::Degraded);
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn bad_declarations_are_invalid_spec_at_inspect() {
    for (from, to, why) in [
        ("secret: tok}", "secret: nope}", "does not declare"),
        (
            "https://api.example.com/rpc",
            "http://api.example.com/rpc",
            "plain http",
        ),
        (
            "dataBoundary: \"Sends the text you select.\", ",
            "",
            "dataBoundary",
        ),
        ("auth: {kind: bearer, secret: tok}, ", "", "declares auth"),
    ] {
        let front = SVC.replace(from, to);
        assert_ne!(front, SVC);
        let r = run(&front, &[], &HostProfile::current(), &state());
        let c = check(&r);
        assert_eq!(c.code, Some("service.invalid_spec"), "{from}");
        assert!(c.message.contains(why), "{}", c.message);
        assert_eq!(r.status, Status::Blocked);
    }
    // Without server-assisted: not allowed, whatever the declaration.
    let front = SVC.replace("runtimeTargets: [local, server-assisted]\n", "");
    let c = run(&front, &[], &HostProfile::current(), &state());
    assert_eq!(check(&c).code, Some("service.remote_not_allowed"));
    assert!(check(&c).message.contains("server-assisted"));
}

#[test]
fn the_admin_policy_denies_an_allowed_remote_service_with_no_setup_action() {
    let mut st = state();
    st.services
        .remote_allowed
        .insert("summarize".into(), "https://api.example.com".into());
    for json in [
        r#"{"remote": {"allow": false}}"#,
        r#"{"remote": {"denyOrigins": ["https://*.example.com"]}}"#,
        r#"{"deny": ["demo/*"]}"#,
        r#"{"remote": {"allowOrigins": "https://api.example.com"}}"#,
    ] {
        st.services.policy = Some(std::sync::Arc::new(
            crate::install::services_policy::ServicesPolicy::from_bytes(
                "/data/policy/services.json".into(),
                json.as_bytes(),
            ),
        ));
        let r = run(SVC, &[], &HostProfile::current(), &st);
        let c = check(&r);
        assert_eq!(c.outcome, Outcome::Blocked, "{json}: {c:?}");
        assert_eq!(c.code, Some("service.policy_denied"), "{json}");
        assert!(c.setup_action.is_none(), "{json}: {c:?}");
        assert!(
            c.message.contains("/data/policy/services.json"),
            "{}",
            c.message
        );
        assert_eq!(r.status, Status::Blocked);
    }
    st.services.policy = Some(std::sync::Arc::new(
        crate::install::services_policy::ServicesPolicy::from_bytes(
            "/data/policy/services.json".into(),
            br#"{"remote": {"allow": false, "allowOrigins": ["https://API.example.com"]}}"#,
        ),
    ));
    assert_eq!(
        run(SVC, &[], &HostProfile::current(), &st).status,
        Status::Ready
    );
}
