//! Setup checks: secrets and integrations the user binds or connects (knowledge and tools are
//! in [`super::runtimes`]: this host cannot bind them yet).

use std::collections::BTreeSet;

use super::{action, Ctx, Outcome};
use crate::install::manifest::Key;

/// One kind of declared slot the user must bind (secret).
struct Slot {
    list: Key,
    kind: &'static str,
    /// Outcome when a required / an optional slot is missing.
    missing: (Outcome, Outcome),
    missing_message: &'static str,
    code: Option<&'static str>,
    /// Setup action kind and title verb, when the user can fix it.
    fix: Option<(&'static str, &'static str)>,
}

fn slot_checks(cx: &mut Ctx, slot: Slot, present: &BTreeSet<String>) {
    for item in cx.m.view().items(slot.list) {
        let key = item.label(slot.kind).to_owned();
        let req = item.required();
        if present.contains(&key) {
            cx.push(
                slot.kind,
                key,
                req,
                Outcome::Pass,
                format!("{} is ready", slot.kind),
            );
            continue;
        }
        let outcome = if req { slot.missing.0 } else { slot.missing.1 };
        let message = format!("{} {key} {}", slot.kind, slot.missing_message);
        let c = cx.push(slot.kind, key.clone(), req, outcome, message);
        c.code = slot.code;
        if let Some((kind, verb)) = slot.fix {
            c.setup_action = action(&key, format!("{verb} {key}"), kind, Some(key.clone()));
        }
    }
}

pub(super) fn declared_requirements(cx: &mut Ctx) {
    let state = cx.state;
    slot_checks(
        cx,
        Slot {
            list: Key::Secrets,
            kind: "secret",
            missing: (Outcome::NeedsSetup, Outcome::Notice),
            missing_message: "is not bound",
            code: None,
            fix: Some(("configure-secret", "Bind secret")),
        },
        &state.bound_secrets,
    );
    // How to bind one today: the CLI reads the value from stdin, never from an argument.
    let app = cx.m.name().to_owned();
    for c in cx.checks.iter_mut().filter(|c| c.kind == "secret") {
        if let Some(a) = c.setup_action.as_mut() {
            a.description = Some(format!("apphost secrets set {app} {}", a.key));
        }
    }
    for i in cx.m.view().items(Key::Integrations) {
        let key = i.label("integration").to_owned();
        let missing = i.readiness_missing().unwrap_or(if i.required() {
            "needs-setup"
        } else {
            "optional"
        });
        let outcome = match missing {
            "blocked" => Outcome::Blocked,
            "needs-setup" => Outcome::NeedsSetup,
            _ => Outcome::Notice,
        };
        let c = cx.push(
            "integration",
            key.clone(),
            outcome != Outcome::Notice,
            outcome,
            format!("integration {key} is not connected"),
        );
        if let Some(a) = i.readiness_setup_action() {
            c.setup_action = action(
                &key,
                format!("Connect {key}"),
                "external",
                Some(a.to_owned()),
            );
        }
    }
}
