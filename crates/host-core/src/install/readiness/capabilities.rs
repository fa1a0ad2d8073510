//! Capability checks: `requires.capabilities`, optional `capabilities`, entries' `requiredCapabilities`.

use std::collections::BTreeSet;

use super::{action, Ctx, Outcome};
use crate::install::compat::{parse_version, Range};

pub(super) fn capability_check(
    cx: &mut Ctx,
    name: &str,
    range: Option<&str>,
    required: bool,
    entry: Option<&str>,
) {
    let key = entry
        .map(|e| format!("{e}:{name}"))
        .unwrap_or_else(|| name.to_owned());
    let miss = if required {
        Outcome::Blocked
    } else {
        Outcome::Degraded
    };
    let (outcome, message, code) = match cx.profile.capabilities.get(name) {
        None => (
            miss,
            format!("{name} is not a capability AppHost knows"),
            Some("capability.unknown"),
        ),
        Some(info) if !info.available => (
            miss,
            format!("{name} is not available in this AppHost build yet"),
            Some("capability.unavailable"),
        ),
        Some(info) => match range.map(|r| (r, Range::parse(r))) {
            Some((r, Ok(rr))) if !parse_version(&info.version).is_some_and(|v| rr.matches(&v)) => (
                miss,
                format!("{name} is version {}; the app needs {r}", info.version),
                Some("compat.requires_unsatisfied"),
            ),
            Some((_, Err(e))) => (miss, e, Some("compat.invalid_range")),
            _ => (
                Outcome::Pass,
                format!("{name} {} is available", info.version),
                None,
            ),
        },
    };
    // lime.agent is available in this build, but runs nothing until a model is set up.
    let needs_model =
        name == "lime.agent" && outcome == Outcome::Pass && !cx.state.model_configured;
    let (outcome, message, code) = if needs_model {
        (
            if required {
                Outcome::NeedsSetup
            } else {
                Outcome::Degraded
            },
            "lime.agent needs a model: none is set up in AppHost".to_owned(),
            Some("model.not_configured"),
        )
    } else {
        (outcome, message, code)
    };
    let c = cx.push("capability", key.clone(), required, outcome, message);
    c.code = code;
    c.version = range.map(str::to_owned);
    c.entry = entry.map(str::to_owned);
    if needs_model {
        c.setup_action = action("model", "Set up a model".into(), "model", None);
        c.remediation = Some("set a model in Settings → Model (or `apphost model set`)".into());
        return;
    }
    if outcome != Outcome::Pass {
        c.remediation = Some(if required {
            "update AppHost to a version that provides this capability".into()
        } else {
            "the app runs without it, with reduced features".into()
        });
    }
}

pub(super) fn capabilities(cx: &mut Ctx) {
    let v = cx.m.view();
    let mut required_names = BTreeSet::new();
    for (name, range) in v.requires().capabilities() {
        required_names.insert(name.to_owned());
        capability_check(cx, name, range, true, None);
    }
    // Capabilities the app says it uses but does not require: optional.
    for name in v.declared_capabilities() {
        if name.starts_with("lime.") && !required_names.contains(name) {
            capability_check(cx, name, None, false, None);
        }
    }
    for e in v.entries() {
        let key = e.label("entry");
        for name in e.required_capabilities() {
            capability_check(cx, name, None, true, Some(key));
        }
    }
}
