//! Runtime checks: services, workflows, knowledge and tools this host cannot run yet.

use super::*;

const MINIMAL: &str =
    r#"{key: wf, states: [{key: start, kind: start, next: end}, {key: end, kind: end}]}"#;

fn preview() -> HostState {
    HostState::preview(now())
}

fn entry<'a>(r: &'a Report, key: &str) -> &'a EntryReadiness {
    r.entries.iter().find(|e| e.entry_key == key).unwrap()
}

fn check<'a>(r: &'a Report, kind: &str, key: &str) -> &'a Check {
    r.checks
        .iter()
        .find(|c| c.kind == kind && c.key == key && c.outcome != Outcome::Notice)
        .unwrap_or_else(|| panic!("no {kind} check {key}: {:#?}", r.checks))
}

fn pages(extra: &str) -> String {
    format!("entries:\n  - {{key: home, kind: page, title: Home, route: /}}\n{extra}")
}

#[test]
fn the_table_names_a_stable_code_for_every_kind() {
    let codes: Vec<_> = crate::install::readiness::runtimes::HOST_RUNS
        .iter()
        .map(|r| (r.kind, r.code))
        .collect();
    assert_eq!(
        codes,
        [
            ("service", "service.runtime_unavailable"),
            ("workflow", "workflow.not_declared"),
            ("knowledge", "knowledge.not_bound"),
            ("tool", "tools.not_granted"),
        ]
    );
}

#[test]
fn a_required_service_blocks_the_app_and_names_it() {
    let front = pages("services:\n  - {key: backend, kind: app-backend, required: true}\n");
    let r = run(&front, &[], &HostProfile::current(), &preview());
    assert_eq!(r.status, Status::Blocked);
    assert!(!r.ok);
    let c = check(&r, "service", "backend");
    assert_eq!(c.code, Some("service.invalid_spec"));
    assert_eq!(c.outcome, Outcome::Blocked);
    assert!(c.message.contains("backend"), "{}", c.message);
    assert!(r.blockers.iter().any(|b| b.contains("backend")));
}

#[test]
fn an_optional_service_degrades_the_app() {
    let front = pages("services:\n  - {key: indexer, kind: worker}\n");
    let r = run(&front, &[], &HostProfile::current(), &preview());
    assert_eq!(r.status, Status::ReadyDegraded);
    assert_eq!(
        check(&r, "service", "indexer").code,
        Some("service.invalid_spec")
    );
    assert!(r.warnings.iter().any(|w| w.contains("indexer")));
}

#[test]
fn an_entry_on_a_service_is_blocked_and_the_others_stay_ready() {
    let front = pages(
        "  - {key: nightly, kind: background-task, title: Nightly, service: indexer}\nservices:\n  - {key: indexer, kind: scheduler}\n",
    );
    let r = run(&front, &[], &HostProfile::current(), &preview());
    assert_eq!(entry(&r, "nightly").status, Status::Blocked);
    assert_eq!(entry(&r, "nightly").missing, ["indexer"]);
    assert_eq!(entry(&r, "home").status, Status::ReadyDegraded);
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn a_valid_workflow_makes_its_entry_ready() {
    let front = pages(&format!(
        "  - {{key: run, kind: workflow, title: Run, workflow: wf}}\nworkflows:\n  - {MINIMAL}\n"
    ));
    let r = run(&front, &[], &HostProfile::current(), &preview());
    let c = check(&r, "workflow", "wf");
    assert_eq!(c.code, None);
    assert_eq!(c.outcome, Outcome::Pass);
    assert_eq!(c.entry.as_deref(), Some("run"));
    assert_eq!(entry(&r, "run").status, Status::Ready);
    assert_eq!(entry(&r, "home").status, Status::Ready);
    assert_eq!(r.status, Status::Ready);
    assert!(r.ok);
}

#[test]
fn an_invalid_workflow_blocks_its_entry_with_the_findings() {
    // `end` is never reached: the start state points at a state that does not exist.
    let bad =
        r#"{key: wf, states: [{key: start, kind: start, next: nowhere}, {key: end, kind: end}]}"#;
    let front = pages(&format!(
        "  - {{key: run, kind: workflow, title: Run, workflow: wf}}\n  - {{key: other, kind: workflow, title: Other, workflow: ok}}\nworkflows:\n  - {bad}\n  - {}\n",
        MINIMAL.replace("key: wf", "key: ok")
    ));
    let r = run(&front, &[], &HostProfile::current(), &preview());
    let c = check(&r, "workflow", "wf");
    assert_eq!(c.code, Some("workflow.unknown_state"));
    assert_eq!(c.entry.as_deref(), Some("run"));
    assert!(
        c.message.contains("workflow.unknown_state"),
        "{}",
        c.message
    );
    assert!(c.message.contains("nowhere"), "{}", c.message);
    assert_eq!(entry(&r, "run").status, Status::Blocked);
    // The valid one is ready: the other's findings block only their own entry.
    assert_eq!(check(&r, "workflow", "ok").outcome, Outcome::Pass);
    assert_eq!(entry(&r, "other").status, Status::Ready);
    assert_eq!(entry(&r, "home").status, Status::Ready);
    assert_eq!(r.status, Status::ReadyDegraded);
}

#[test]
fn a_workflow_is_checked_against_the_declared_capabilities() {
    let wf = r#"{key: wf, recovery: {onError: retry, onTimeout: retry, maxRetries: 2}, states: [{key: start, kind: start, next: save}, {key: save, kind: storage-write, storageKey: k, value: "'v'", next: end}, {key: end, kind: end}]}"#;
    let body = format!(
        "  - {{key: run, kind: workflow, title: Run, workflow: wf}}\nworkflows:\n  - {wf}\n"
    );
    let r = run(&pages(&body), &[], &HostProfile::current(), &preview());
    assert_eq!(
        check(&r, "workflow", "wf").code,
        Some("workflow.undeclared_capability")
    );
    let declared = format!(
        "requires:\n  capabilities: [lime.storage]\n{}",
        pages(&body)
    );
    let r = run(&declared, &[], &HostProfile::current(), &preview());
    assert_eq!(check(&r, "workflow", "wf").outcome, Outcome::Pass);
    assert_eq!(entry(&r, "run").status, Status::Ready);
}

#[test]
fn workflow_warnings_are_notices_not_blockers() {
    let wf = MINIMAL.replace(
        "{key: end, kind: end}",
        "{key: end, kind: end, colour: blue}",
    );
    let front = pages(&format!("workflows:\n  - {wf}\n"));
    let r = run(&front, &[], &HostProfile::current(), &preview());
    let notice = r
        .checks
        .iter()
        .find(|c| c.kind == "workflow" && c.outcome == Outcome::Notice)
        .unwrap();
    assert_eq!(notice.code, Some("workflow.unknown_field"));
    // Unreferenced and valid: it passes, as an optional item.
    let c = check(&r, "workflow", "wf");
    assert_eq!(c.outcome, Outcome::Pass);
    assert!(!c.required);
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn a_workflow_entry_naming_no_declared_workflow_is_blocked() {
    let front = pages("  - {key: run, kind: workflow, title: Run, workflow: workflows/x.yaml}\n");
    let r = run(&front, &[], &HostProfile::current(), &preview());
    let c = check(&r, "workflow", "workflows/x.yaml");
    assert_eq!(c.code, Some("workflow.not_declared"));
    assert_eq!(entry(&r, "run").status, Status::Blocked);
    assert_eq!(entry(&r, "home").status, Status::Ready);
}

#[test]
fn a_workflow_entry_pointing_at_a_markdown_description_says_so() {
    // The standard's examples: `workflow: ./workflows/draft-review.workflow.md`.
    let front = pages(
        "  - {key: run, kind: workflow, title: Run, workflow: ./workflows/draft-review.workflow.md}\n",
    );
    let r = run(&front, &[], &HostProfile::current(), &preview());
    let c = check(&r, "workflow", "./workflows/draft-review.workflow.md");
    assert_eq!(c.code, Some("workflow.not_declared"));
    assert!(c.message.contains("Markdown description"), "{}", c.message);
    assert!(c.remediation.as_deref().unwrap().contains("workflows[]"));
    assert_eq!(entry(&r, "run").status, Status::Blocked);
}

#[test]
fn a_hostile_workflow_blocks_its_entry_without_panicking() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    let states: String = (0..3000)
        .map(|i| format!("{{key: s{i}, kind: wait, duration: 1s, next: s{}}},", i + 1))
        .collect();
    let hostile = [
        format!(
            r#"{{key: wf, states: [{{key: start, kind: start, next: b}}, {{key: b, kind: branch, cases: [{{when: "{deep}", next: end}}], default: end}}, {{key: end, kind: end}}]}}"#
        ),
        format!("{{key: wf, states: [{{key: start, kind: start, next: s0}}, {states} {{key: s3000, kind: end}}]}}"),
        "{key: wf, states: 7}".to_owned(),
    ];
    for wf in hostile {
        let front = pages(&format!(
            "  - {{key: run, kind: workflow, title: Run, workflow: wf}}\nworkflows:\n  - {wf}\n"
        ));
        let r = run(&front, &[], &HostProfile::current(), &preview());
        let c = check(&r, "workflow", "wf");
        let code = c.code.unwrap();
        assert!(code.starts_with("workflow."), "{code}");
        assert_ne!(code, "workflow.not_declared", "{}", c.message);
        assert!(c.message.len() < 4096, "{}", c.message.len());
        assert_eq!(entry(&r, "run").status, Status::Blocked);
        assert_eq!(entry(&r, "home").status, Status::Ready, "{code}");
    }
    // A workflow that is not even an object: nothing matches the entry, which stays blocked;
    // the stray item only degrades the app.
    let front =
        pages("  - {key: run, kind: workflow, title: Run, workflow: wf}\nworkflows:\n  - [1, 2]\n");
    let r = run(&front, &[], &HostProfile::current(), &preview());
    assert_eq!(entry(&r, "run").status, Status::Blocked);
    assert_eq!(entry(&r, "home").status, Status::ReadyDegraded);
    assert!(r.ok);
}

#[test]
fn a_required_knowledge_template_needs_setup_until_the_user_binds_a_folder() {
    let front = "knowledgeTemplates:\n  - {key: kb, standard: agentknowledge, type: pack, required: true}\n  - {key: extra, standard: agentknowledge, type: pack}\n";
    let r = run(front, &[], &HostProfile::current(), &preview());
    assert_eq!(r.status, Status::NeedsSetup);
    let c = check(&r, "knowledge", "kb");
    assert_eq!(c.code, Some("knowledge.not_bound"));
    assert_eq!(c.outcome, Outcome::NeedsSetup);
    assert!(c.message.contains("kb"));
    let a = c.setup_action.as_ref().expect("a Bind knowledge action");
    assert_eq!(
        (a.kind, a.title.as_str()),
        ("bind-knowledge", "Bind knowledge kb")
    );
    assert!(r
        .setup_actions
        .iter()
        .any(|a| a.kind == "bind-knowledge" && a.key == "kb"));
    let extra = r
        .checks
        .iter()
        .find(|c| c.kind == "knowledge" && c.key == "extra")
        .unwrap();
    assert_eq!(
        extra.outcome,
        Outcome::Notice,
        "an optional template never holds the app back"
    );
    // Bound (the user bound a folder to each template): ready.
    let mut state = preview();
    state.bound_knowledge.insert("kb".into());
    let r = run(front, &[], &HostProfile::current(), &state);
    assert_eq!(r.status, Status::Ready);
    state.bound_knowledge.insert("extra".into());
    let r = run(front, &[], &HostProfile::current(), &state);
    assert_eq!(r.status, Status::Ready);
    assert!(r.setup_actions.is_empty());
}

#[test]
fn tool_refs_need_a_granted_tool_a_server_lists() {
    let front = "toolRefs:\n  - {key: parser, provider: toolhub, required: true}\n";
    let r = run(front, &[], &HostProfile::current(), &preview());
    assert_eq!(r.status, Status::NeedsSetup);
    let c = check(&r, "tool", "parser");
    assert_eq!(c.code, Some("tools.not_granted"));
    let action = c.setup_action.as_ref().expect("a Grant tool action");
    assert_eq!(action.kind, "grant-tool");
    assert_eq!(action.target.as_deref(), Some("toolhub/parser"));
    assert!(
        action
            .description
            .as_deref()
            .unwrap_or("")
            .contains("apphost tools grant"),
        "{action:?}"
    );
    let optional = front.replace("required: true", "required: false");
    let r = run(&optional, &[], &HostProfile::current(), &preview());
    assert_eq!(r.status, Status::ReadyDegraded);
    let mut state = preview();
    state.available_tools.insert("parser".into());
    let r = run(front, &[], &HostProfile::current(), &state);
    assert_eq!(r.status, Status::Ready);
}
