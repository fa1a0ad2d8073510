use std::collections::BTreeMap;

use super::*;
use crate::foundation::hashing::sha256;
use crate::foundation::limits::Limits;

fn manifest(front: &str, extra: &[(&str, &str)]) -> (Manifest, Vec<FileRecord>) {
    let app_md = format!("---\nname: demo\ndescription: d\nversion: 1.0.0\nstatus: ready\nappType: agent-app\nmanifestVersion: \"0.10.0\"\n{front}---\n");
    let mut captured = BTreeMap::new();
    captured.insert("APP.md".to_string(), app_md.into_bytes());
    let mut files = vec![FileRecord {
        path: "APP.md".into(),
        size: 1,
        sha256: sha256(b""),
    }];
    for (p, c) in extra {
        captured.insert(p.to_string(), c.as_bytes().to_vec());
        files.push(FileRecord {
            path: p.to_string(),
            size: c.len() as u64,
            sha256: sha256(c.as_bytes()),
        });
    }
    (
        crate::install::manifest::load(&captured, &Limits::default()).unwrap(),
        files,
    )
}

fn now() -> jiff::Timestamp {
    "2026-11-22T00:00:00Z".parse().unwrap()
}

fn run(front: &str, extra: &[(&str, &str)], profile: &HostProfile, state: &HostState) -> Report {
    let (m, files) = manifest(front, extra);
    evaluate(&m, &files, profile, state)
}

#[test]
fn an_app_with_no_requirements_is_ready() {
    let r = run("", &[], &HostProfile::current(), &HostState::preview(now()));
    assert_eq!(r.status, Status::Ready);
    assert!(r.ok);
}

#[test]
fn unavailable_capabilities_block_and_say_why() {
    let front = "requires:\n  capabilities: [lime.storage]\n";
    let r = run(front, &[], &without_storage(), &HostState::preview(now()));
    assert_eq!(r.status, Status::Blocked);
    let c = r.checks.iter().find(|c| c.kind == "capability").unwrap();
    assert_eq!(c.code, Some("capability.unavailable"));
    assert_eq!(c.severity, "error");
    let r = run(
        front,
        &[],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Ready);
    let r = run(
        "requires:\n  capabilities: {lime.storage: \"^2.0.0\"}\n",
        &[],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    let r = run(
        "requires:\n  capabilities: [lime.teleport]\n",
        &[],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.checks[0].code, Some("capability.unknown"));
}

#[test]
fn an_app_written_for_an_older_sdk_of_the_compatible_line_is_ready() {
    // The standard's examples and quickstart: ^0.6.0, ^0.7.0, ^0.3.0 against the 0.10.0 SDK.
    for range in ["^0.6.0", "^0.7.0", "^0.3.0", "^0.10.0"] {
        let r = run(
            &format!("requires:\n  sdk: \"@lime/app-sdk@{range}\"\n"),
            &[],
            &HostProfile::current(),
            &HostState::preview(now()),
        );
        let c = r.checks.iter().find(|c| c.key == "requires.sdk").unwrap();
        assert_eq!(c.outcome, Outcome::Pass, "{range}: {}", c.message);
        assert_eq!(r.status, Status::Ready, "{range}");
    }
}

#[test]
fn the_sdk_hint_says_update_apphost_only_when_a_newer_one_could_help() {
    let sdk = |range: &str| {
        let r = run(
            &format!("requires:\n  sdk: \"@lime/app-sdk@{range}\"\n"),
            &[],
            &HostProfile::current(),
            &HostState::preview(now()),
        );
        assert_eq!(r.status, Status::Blocked, "{range}");
        let c = r
            .checks
            .iter()
            .find(|c| c.key == "requires.sdk")
            .unwrap()
            .clone();
        assert_eq!(c.code, Some("compat.requires_unsatisfied"), "{range}");
        c.remediation.unwrap()
    };
    assert!(sdk("^0.11.0").contains("update AppHost"));
    assert!(sdk("^1.0.0").contains("update AppHost"));
    for never in ["^0.2.0", "<0.3.0", "0.6.1"] {
        let hint = sdk(never);
        assert!(!hint.contains("update AppHost"), "{never}: {hint}");
        assert!(hint.contains("newer release of the app"), "{never}: {hint}");
    }
    // The same rule for requires.lime.*: a range only older hosts satisfy.
    let r = run(
        "requires:\n  lime: {appRuntime: \"<0.5.0\"}\n",
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    let hint = r.checks[0].remediation.clone().unwrap();
    assert!(!hint.contains("update AppHost"), "{hint}");
}

#[test]
fn runtime_range_and_end_of_life() {
    let r = run(
        "requires:\n  lime: {appRuntime: \">=2.0.0\"}\n",
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.checks[0].code, Some("compat.requires_unsatisfied"));
    let r = run(
        "endOfLifeAt: \"2026-01-01\"\nsupportWindow: {supersededBy: demo@2}\n",
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(
        r.checks[0].remediation.as_deref(),
        Some("install demo@2 instead")
    );
    let r = run(
        "deprecatedAt: \"2026-01-01\"\n",
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Ready);
    assert_eq!(r.warnings.len(), 1);
}

#[test]
fn permissions_secrets_and_entries() {
    let front = "permissions:\n  - {key: files, scope: filesystem, access: read, required: true}\n  - {key: net, scope: network, access: read, required: false}\nsecrets:\n  - {key: token, required: true}\nentries:\n  - {key: a, kind: page, title: A, route: /a, permissions: [files]}\n  - {key: b, kind: page, title: B, route: /b, permissions: [net]}\n";
    // Preview: required permissions count as granted on consent; the secret still needs setup.
    let r = run(
        front,
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::NeedsSetup);
    assert_eq!(
        r.setup_actions.iter().map(|a| a.kind).collect::<Vec<_>>(),
        vec!["grant-permission", "configure-secret"]
    );
    // Installed with nothing granted: entry a needs setup, entry b is degraded (optional perm).
    let mut st = HostState::preview(now());
    st.grants = Grants::Granted(Default::default());
    st.bound_secrets.insert("token".into());
    let r = run(front, &[], &HostProfile::current(), &st);
    assert_eq!(r.status, Status::NeedsSetup);
    let by_key: BTreeMap<_, _> = r
        .entries
        .iter()
        .map(|e| (e.entry_key.as_str(), e.status))
        .collect();
    assert_eq!(by_key["a"], Status::NeedsSetup);
    assert_eq!(by_key["b"], Status::NeedsSetup); // "files" is required app-wide, so b needs it too
    st.grants = Grants::Granted(["files".to_string()].into());
    let r = run(front, &[], &HostProfile::current(), &st);
    let by_key: BTreeMap<_, _> = r
        .entries
        .iter()
        .map(|e| (e.entry_key.as_str(), e.status))
        .collect();
    assert_eq!(by_key["a"], Status::Ready);
    assert_eq!(by_key["b"], Status::ReadyDegraded);
    assert_eq!(r.status, Status::ReadyDegraded);
    st.disabled = true;
    assert_eq!(
        run(front, &[], &HostProfile::current(), &st).status,
        Status::Disabled
    );
}

#[test]
fn eval_tiers_map_to_states() {
    let evals = "readiness:\n  required:\n    - {check: capability_available, capability: lime.cloudSession, blocker: true}\n  recommended:\n    - {check: knowledge_bound, template: kb}\n  performance:\n    - {check: storage_quota, expect: \">= 100MB\"}\n";
    let r = run(
        "",
        &[("evals/readiness.yaml", evals)],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    let tiers: Vec<_> = r.checks.iter().map(|c| (c.tier, c.outcome)).collect();
    assert_eq!(
        tiers,
        vec![
            (Some("required"), Outcome::Blocked),
            (Some("recommended"), Outcome::Degraded),
            (Some("performance"), Outcome::Unknown)
        ]
    );
    let r = run(
        "",
        &[("evals/readiness.yaml", evals)],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn missing_package_paths_block() {
    let r = run(
        "runtimePackage:\n  ui: {path: ./dist/ui}\n",
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    let r = run(
        "runtimePackage:\n  ui: {path: ./dist/ui}\n",
        &[("dist/ui/index.html", "<p>")],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn readiness_is_deterministic() {
    let front = "requires:\n  capabilities: [lime.storage, lime.ui]\nsecrets:\n  - {key: s, required: true}\n";
    let a = serde_json::to_string(&run(
        front,
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    ))
    .unwrap();
    let b = serde_json::to_string(&run(
        front,
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    ))
    .unwrap();
    assert_eq!(a, b);
}

#[test]
fn storage_is_reported_as_available_only_when_lime_storage_is() {
    let front = "storage:\n  namespace: notes\n  migrations: ./storage/migrations\n";
    let files = [("storage/migrations/001_init.sql", "create table t(x);")];
    let storage = |r: &Report| {
        r.checks
            .iter()
            .find(|c| c.key == "storage.namespace:notes")
            .cloned()
            .unwrap()
    };
    // A host without lime.storage: no namespace exists and no migration is applied.
    let r = run(
        front,
        &files,
        &without_storage(),
        &HostState::preview(now()),
    );
    let c = storage(&r);
    assert_eq!(c.outcome, Outcome::Degraded);
    assert_eq!(c.code, Some("capability.unavailable"));
    assert!(c.message.contains("not available"), "{}", c.message);
    assert!(!c.message.contains("reviewed"), "{}", c.message);
    assert!(c.message.contains("1 planned migration"), "{}", c.message);
    assert_eq!(r.status, Status::ReadyDegraded);
    // An app that requires lime.storage cannot run without it.
    let r = run(
        &format!("{front}requires:\n  capabilities: [lime.storage]\n"),
        &files,
        &without_storage(),
        &HostState::preview(now()),
    );
    assert_eq!(storage(&r).outcome, Outcome::Blocked);
    assert!(storage(&r).required);
    assert_eq!(r.status, Status::Blocked);
    // A host that provides lime.storage creates the namespace on first use.
    let r = run(
        front,
        &files,
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    let c = storage(&r);
    assert_eq!(c.outcome, Outcome::Pass);
    assert!(c.message.contains("on first use"), "{}", c.message);
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn an_unknown_runtime_requirement_keeps_the_app_from_ready() {
    let r = run(
        "requires:\n  lime: {teleport: \">=1.0.0\"}\n",
        &[],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    assert!(!r.ok);
    let c = &r.checks[0];
    assert_eq!(c.outcome, Outcome::Unknown);
    assert_eq!(c.code, Some("compat.unknown_requirement"));
    assert_eq!(c.severity, "error");
    assert_eq!(r.blockers.len(), 1);
    assert!(
        r.blockers[0].contains("requires.lime.teleport"),
        "{:?}",
        r.blockers
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn an_unknown_required_eval_check_keeps_the_app_from_ready() {
    let evals = "readiness:\n  required:\n    - {check: moon_phase, expect: full, message: the moon is full}\n  performance:\n    - {check: storage_quota, expect: \">= 100MB\"}\n";
    let r = run(
        "",
        &[("evals/readiness.yaml", evals)],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blockers.len(), 1);
    assert!(r.blockers[0].contains("moon_phase"), "{:?}", r.blockers);
    assert!(
        r.blockers[0].contains("the moon is full"),
        "{:?}",
        r.blockers
    );
    let c = r
        .checks
        .iter()
        .find(|c| c.tier == Some("required"))
        .unwrap();
    assert_eq!(c.code, Some("eval.unknown_check"));
    // An unknown optional (performance) check is only shown.
    let evals = "readiness:\n  performance:\n    - {check: storage_quota, expect: \">= 100MB\"}\n";
    let r = run(
        "",
        &[("evals/readiness.yaml", evals)],
        &HostProfile::all_available(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::Ready);
    assert_eq!(r.warnings.len(), 1);
}

#[test]
fn only_a_boolean_true_makes_an_item_required() {
    // `required: "true"` is a manifest error; readiness must not read it as required either,
    // or readiness and install would disagree about what was consented to.
    let front = "permissions:\n  - {key: files, scope: filesystem, access: read, required: \"true\"}\nsecrets:\n  - {key: token, required: 1}\n";
    let (m, files) = manifest(front, &[]);
    assert!(m.has_errors());
    let r = evaluate(
        &m,
        &files,
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert!(r.checks.iter().all(|c| !c.required), "{:?}", r.checks);
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn bare_versions_in_requires_are_exact() {
    // npm: `1.2.3` means exactly 1.2.3 and `1.2` means 1.2.x (the Cargo grammar of the `semver`
    // crate would read both as caret ranges and admit 1.2.4 and 1.3.0).
    let mut profile = HostProfile::current();
    let status = |profile: &HostProfile, range: &str| {
        run(
            &format!("requires:\n  lime: {{appRuntime: \"{range}\"}}\n"),
            &[],
            profile,
            &HostState::preview(now()),
        )
        .status
    };
    profile.app_runtime_version = "1.2.4".into();
    assert_eq!(status(&profile, "1.2.3"), Status::Blocked);
    assert_eq!(status(&profile, "1.2.4"), Status::Ready);
    assert_eq!(status(&profile, "1.2"), Status::Ready);
    profile.app_runtime_version = "1.3.0".into();
    assert_eq!(status(&profile, "1.2"), Status::Blocked);
    assert_eq!(status(&profile, "1"), Status::Ready);
    assert_eq!(status(&profile, "^1.2"), Status::Ready);
}

/// This build's profile without `lime.storage` (which it implements).
fn without_storage() -> HostProfile {
    let mut p = HostProfile::current();
    let c = p.capabilities.get_mut("lime.storage").unwrap();
    c.available = false;
    c.reason = Some("capability.not_implemented".into());
    p
}

#[test]
fn an_unbound_required_secret_needs_setup_with_the_cli_command_and_an_optional_one_does_not_block()
{
    let front = "secrets:\n  - {key: api_token, provider: example, required: true, scope: app}\n  - {key: extra, required: false}\n";
    let r = run(
        front,
        &[],
        &HostProfile::current(),
        &HostState::preview(now()),
    );
    assert_eq!(r.status, Status::NeedsSetup);
    let a = &r.setup_actions[0];
    assert_eq!((a.kind, a.key.as_str()), ("configure-secret", "api_token"));
    assert_eq!(a.title, "Bind secret api_token");
    assert_eq!(
        a.description.as_deref(),
        Some("apphost secrets set demo api_token")
    );
    // The optional slot is reported, never a setup action that blocks.
    assert_eq!(r.setup_actions.len(), 1);
    assert!(r.warnings.iter().any(|w| w.contains("extra")));
    let mut st = HostState::preview(now());
    st.bound_secrets.insert("api_token".into());
    let r = run(front, &[], &HostProfile::current(), &st);
    assert_eq!(r.status, Status::Ready);
    assert!(r.warnings.iter().any(|w| w.contains("extra")));
}

#[test]
fn lime_agent_needs_a_model_required_blocks_as_setup_optional_degrades() {
    let required = "requires:\n  capabilities: [lime.agent]\nentries:\n  - {key: a, kind: page, requiredCapabilities: [lime.agent]}\n";
    let mut st = HostState::preview(now());
    let r = run(required, &[], &HostProfile::current(), &st);
    assert_eq!(r.status, Status::NeedsSetup);
    let actions: Vec<_> = r
        .setup_actions
        .iter()
        .map(|a| (a.title.as_str(), a.kind))
        .collect();
    assert_eq!(
        actions,
        [("Set up a model", "model")],
        "one action, however many checks"
    );
    assert!(r
        .checks
        .iter()
        .any(|c| c.code == Some("model.not_configured")));
    let optional = "capabilities: [lime.agent]\n";
    assert_eq!(
        run(optional, &[], &HostProfile::current(), &st).status,
        Status::ReadyDegraded
    );
    st.model_configured = true;
    assert_eq!(
        run(required, &[], &HostProfile::current(), &st).status,
        Status::Ready
    );
    assert_eq!(
        run(optional, &[], &HostProfile::current(), &st).status,
        Status::Ready
    );
}

mod remote_services;
mod runtimes;
mod services;
