//! Validation of a parsed workflow, before anything runs: graph (start, end, unknown and
//! unreachable states, cycles that never wait), recovery where a step can fail or time out,
//! capabilities (each step is one `lime.*` call the app must declare) and expression references.
//!
//! The validator reads no manifest: the caller passes the app's declared capabilities
//! (`requires.capabilities`, list or map keys). Every finding has a stable code (see `finding`).

use std::collections::{BTreeMap, BTreeSet};

use super::definition::{Definition, Kind, OnFailure, Settings, State};
use super::finding::{code, Findings};

/// The `lime.*` methods a `tool-call` may name in `uses` (the standard's allowlisted step DSL);
/// any other `uses` is a tool key, called through `lime.tools`.
pub const TOOL_CALL_METHODS: &[&str] = &[
    "lime.knowledge.search",
    "lime.evidence.record",
    "lime.storage.get",
    "lime.storage.set",
    "lime.events.publish",
    "lime.tools.invoke",
    "lime.services.call",
];

/// The capability and method one step calls, or `None` for a state that calls nothing
/// (`start`, `branch`, `wait`, `end`).
///
/// - `agent-task` -> `lime.agent.startTask`;
/// - `tool-call` -> the named `lime.<cap>.<method>` when `uses` is one of [`TOOL_CALL_METHODS`],
///   else `lime.tools.invoke` with `uses` as the tool key;
/// - `storage-write` -> `lime.storage.set`; `artifact-create` -> `lime.artifacts.create`;
/// - `human-review`, `user-input` -> `lime.workflow.respond`: a host-drawn prompt (no app code
///   runs) that only the user answers (the host UI, `apphost workflow respond`); it needs no
///   declared capability.
pub fn step_call(s: &State) -> Option<(&'static str, &'static str)> {
    match &s.settings {
        Settings::AgentTask { .. } => Some(("lime.agent", "startTask")),
        Settings::ToolCall { uses, .. } => match TOOL_CALL_METHODS.iter().find(|m| **m == uses) {
            Some(m) => {
                let (cap, method) = m.rsplit_once('.').unwrap_or((m, ""));
                Some((cap, method))
            }
            None => Some(("lime.tools", "invoke")),
        },
        Settings::StorageWrite { .. } => Some(("lime.storage", "set")),
        Settings::ArtifactCreate { .. } => Some(("lime.artifacts", "create")),
        Settings::HumanReview { .. } | Settings::UserInput { .. } => {
            Some(("lime.workflow", "respond"))
        }
        Settings::Start | Settings::Branch { .. } | Settings::Wait(_) | Settings::End { .. } => {
            None
        }
    }
}

/// Validates `def` against the app's declared capabilities, adding findings to `f`.
pub fn validate(def: &Definition, declared: &BTreeSet<String>, f: &mut Findings) {
    let index = keys(def, f);
    start_and_end(def, f);
    edges(def, &index, f);
    if !f.has_errors() {
        reachability(def, &index, f);
        cycles(def, &index, f);
    }
    recovery(def, f);
    capabilities(def, declared, f);
    outputs(def, f);
}

fn at(i: usize, field: &str) -> String {
    format!("/states/{i}/{field}")
}

fn keys<'a>(def: &'a Definition, f: &mut Findings) -> BTreeMap<&'a str, usize> {
    let mut index = BTreeMap::new();
    for (i, s) in def.states.iter().enumerate() {
        if index.insert(s.key.as_str(), i).is_some() {
            f.error(
                code::DUPLICATE_KEY,
                at(i, "key"),
                format!("state {:?} is declared twice", s.key),
            );
        }
    }
    index
}

fn start_and_end(def: &Definition, f: &mut Findings) {
    let starts: Vec<usize> = (0..def.states.len())
        .filter(|i| def.states[*i].kind == Kind::Start)
        .collect();
    match starts.len() {
        0 => f.error(code::NO_START, "/states", "a workflow has one start state"),
        1 => {}
        _ => f.error(
            code::MULTIPLE_START,
            at(starts[1], "kind"),
            "a workflow has one start state",
        ),
    }
    if !def.states.iter().any(|s| s.kind == Kind::End) {
        f.error(
            code::NO_END,
            "/states",
            "a workflow has at least one end state",
        );
    }
}

fn edges(def: &Definition, index: &BTreeMap<&str, usize>, f: &mut Findings) {
    for (i, s) in def.states.iter().enumerate() {
        if !matches!(s.kind, Kind::End | Kind::Branch) && s.next.is_none() {
            f.error(
                code::MISSING_NEXT,
                at(i, "next"),
                format!("a {} state needs a next", s.kind.name()),
            );
        }
        if let Settings::Branch { default: None, .. } = &s.settings {
            f.error(
                code::MISSING_NEXT,
                at(i, "default"),
                "a branch needs a default",
            );
        }
        for target in def.successors(s) {
            if !index.contains_key(target.as_str()) {
                f.error(
                    code::UNKNOWN_STATE,
                    at(i, "next"),
                    format!("no state {target:?}"),
                );
            }
        }
    }
}

fn reachability(def: &Definition, index: &BTreeMap<&str, usize>, f: &mut Findings) {
    let Some(start) = def.start() else { return };
    let mut seen = vec![false; def.states.len()];
    let mut stack = vec![index[start.key.as_str()]];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        for t in def.successors(&def.states[i]) {
            if let Some(&j) = index.get(t.as_str()) {
                stack.push(j);
            }
        }
    }
    for (i, s) in def.states.iter().enumerate() {
        if !seen[i] {
            f.error(
                code::UNREACHABLE_STATE,
                at(i, "key"),
                format!("state {:?} is never reached", s.key),
            );
        }
    }
}

/// Every cycle must pass a state that waits (`wait`, `human-review`, `user-input`): drop the
/// waiting states and any cycle left is refused. Tarjan's SCC, iterative.
fn cycles(def: &Definition, index: &BTreeMap<&str, usize>, f: &mut Findings) {
    let n = def.states.len();
    let succ: Vec<Vec<usize>> = def
        .states
        .iter()
        .map(|s| {
            if s.kind.waits() {
                return Vec::new();
            }
            def.successors(s)
                .iter()
                .filter_map(|t| index.get(t.as_str()).copied())
                .filter(|j| !def.states[*j].kind.waits())
                .collect()
        })
        .collect();
    for comp in sccs(&succ) {
        let self_loop = comp.len() == 1 && succ[comp[0]].contains(&comp[0]);
        if comp.len() > 1 || self_loop {
            let first = *comp.iter().min().unwrap_or(&0);
            let names: Vec<&str> = comp
                .iter()
                .take(8)
                .map(|i| def.states[*i].key.as_str())
                .collect();
            f.error(
                code::CYCLE_WITHOUT_WAIT,
                at(first, "next"),
                format!("states {names:?} loop without a wait, human-review or user-input"),
            );
        }
    }
    let _ = n;
}

fn sccs(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succ.len();
    let mut idx = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if idx[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 && idx[v] == usize::MAX {
                idx[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*child) {
                *child += 1;
                if idx[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(idx[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == idx[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(comp);
            }
        }
    }
    out
}

/// A step that calls a capability needs a recovery (its own or the workflow's) with `onError`;
/// a step with a timeout needs `onTimeout`. Retry settings given twice must agree.
fn recovery(def: &Definition, f: &mut Findings) {
    check_retry_agree(
        def.defaults.recovery.as_ref(),
        def.defaults.retry.as_ref(),
        "",
        f,
    );
    for (i, s) in def.states.iter().enumerate() {
        check_retry_agree(
            s.recovery.as_ref(),
            s.retry.as_ref(),
            &format!("/states/{i}"),
            f,
        );
        let r = def.recovery_of(s);
        if s.kind.calls() && r.and_then(|r| r.on_error.as_ref()).is_none() {
            f.error(
                code::MISSING_RECOVERY,
                at(i, "recovery"),
                format!(
                    "{} {:?} calls a capability: give recovery.onError (or a workflow recovery)",
                    s.kind.name(),
                    s.key
                ),
            );
        }
        if def.timeout_of(s).is_some()
            && !matches!(s.kind, Kind::Wait)
            && r.and_then(|r| r.on_timeout.as_ref()).is_none()
        {
            f.error(
                code::MISSING_RECOVERY,
                at(i, "recovery"),
                format!(
                    "state {:?} has a timeout: give recovery.onTimeout (or a workflow recovery)",
                    s.key
                ),
            );
        }
        if let Some(OnFailure::RetryWithLongerTimeout) =
            s.recovery.as_ref().and_then(|r| r.on_timeout.as_ref())
        {
            if def.timeout_of(s).is_none() && s.kind.calls() {
                f.warning(
                    code::INVALID_FIELD,
                    at(i, "recovery"),
                    "retry_with_longer_timeout on a step with no timeout",
                );
            }
        }
    }
}

fn check_retry_agree(
    r: Option<&super::definition::Recovery>,
    p: Option<&super::definition::RetryPolicy>,
    path: &str,
    f: &mut Findings,
) {
    if let (Some(retries), Some(attempts)) = (
        r.and_then(|r| r.max_retries),
        p.and_then(|p| p.max_attempts),
    ) {
        if retries + 1 != attempts {
            f.error(
                code::CONFLICTING_RETRY,
                format!("{path}/retryPolicy/maxAttempts"),
                format!("recovery.maxRetries {retries} and retryPolicy.maxAttempts {attempts} disagree (attempts = retries + 1)"),
            );
        }
    }
}

fn capabilities(def: &Definition, declared: &BTreeSet<String>, f: &mut Findings) {
    for (i, s) in def.states.iter().enumerate() {
        if let Settings::ToolCall { uses, .. } = &s.settings {
            if uses.starts_with("lime.") && !TOOL_CALL_METHODS.contains(&uses.as_str()) {
                f.error(
                    code::UNKNOWN_METHOD,
                    at(i, "uses"),
                    format!(
                        "{uses:?} is not a step method; allowed: {}",
                        TOOL_CALL_METHODS.join(", ")
                    ),
                );
                continue;
            }
        }
        // A review or an input is a host-drawn prompt the user answers (the host UI, the CLI):
        // the app calls nothing, so it declares nothing for it.
        let host_prompt = matches!(
            s.settings,
            Settings::HumanReview { .. } | Settings::UserInput { .. }
        );
        if let Some((cap, method)) = step_call(s).filter(|_| !host_prompt) {
            if !declared.contains(cap) {
                f.error(
                    code::UNDECLARED_CAPABILITY,
                    at(i, "kind"),
                    format!("{} {:?} calls {cap}.{method}, which requires.capabilities does not declare", s.kind.name(), s.key),
                );
            }
        }
    }
}

/// Output names are unique; expressions read only declared outputs.
fn outputs(def: &Definition, f: &mut Findings) {
    let mut names = BTreeSet::new();
    for (i, s) in def.states.iter().enumerate() {
        if let Some(o) = &s.output {
            if !names.insert(o.as_str()) {
                f.error(
                    code::DUPLICATE_OUTPUT,
                    at(i, "output"),
                    format!("output {o:?} is given by two states"),
                );
            }
        }
    }
    for (i, s) in def.states.iter().enumerate() {
        for e in state_exprs(s) {
            for r in e.output_refs() {
                if !names.contains(r.as_str()) {
                    f.error(
                        code::UNKNOWN_OUTPUT,
                        at(i, "kind"),
                        format!("outputs.{r} is not any state's output"),
                    );
                }
            }
        }
    }
}

/// Every expression of a state.
pub fn state_exprs(s: &State) -> Vec<&super::expr::Expr> {
    match &s.settings {
        Settings::AgentTask { input, .. } => input.iter().flat_map(|t| t.exprs()).collect(),
        Settings::ToolCall { arguments, .. } => arguments.iter().flat_map(|t| t.exprs()).collect(),
        Settings::HumanReview { show, .. } => show.iter().flat_map(|t| t.exprs()).collect(),
        Settings::StorageWrite { value, .. } => value.exprs(),
        Settings::ArtifactCreate { title, content, .. } => {
            let mut v = title.exprs();
            v.extend(content.exprs());
            v
        }
        Settings::Branch { cases, .. } => cases.iter().map(|c| &c.when).collect(),
        Settings::Wait(super::definition::WaitFor::Until(e)) => vec![e.as_ref()],
        Settings::End { result } => result.iter().flat_map(|t| t.exprs()).collect(),
        Settings::Start | Settings::UserInput { .. } | Settings::Wait(_) => Vec::new(),
    }
}
