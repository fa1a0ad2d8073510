//! Compatibility checks: `requires.lime.*`, `requires.sdk`, end of life, deprecation and install modes.

use serde_json::Value;

use super::{Ctx, Outcome};
use crate::install::compat::{
    parse_date, parse_version, provided_sdk_versions, sdk_fit, split_package_spec, Range, SdkFit,
};
use crate::install::manifest::Key;

pub(super) fn compatibility(cx: &mut Ctx) {
    let v = cx.m.view();
    let req = v.requires();
    {
        for (name, range) in req.lime() {
            let range_text = range.as_str().unwrap_or_default();
            let host_version = match name {
                "appRuntime" | "runtime" => Some(cx.profile.app_runtime_version.clone()),
                "host" | "desktop" | "apphost" => Some(cx.profile.host_version.clone()),
                _ => None,
            };
            let key = format!("requires.lime.{name}");
            let Some(have) = host_version else {
                let c = cx.push(
                    "compatibility",
                    key,
                    true,
                    Outcome::Unknown,
                    format!("requires.lime.{name} {range_text:?} is a requirement AppHost does not know, so it cannot confirm it"),
                );
                c.code = Some("compat.unknown_requirement");
                c.version = Some(range_text.into());
                c.remediation = Some(
                    "update AppHost, or install a release of the app that does not require it"
                        .into(),
                );
                continue;
            };
            check_range(
                cx,
                "compatibility",
                key,
                range_text,
                &have,
                "the host runtime",
            );
        }
    }
    if let Some(sdk) = req.sdk() {
        let (pkg, range) = split_package_spec(sdk);
        if pkg != cx.profile.sdk_package {
            let c = cx.push(
                "compatibility",
                "requires.sdk",
                true,
                Outcome::Blocked,
                format!(
                    "the app needs SDK {pkg}; AppHost provides {}",
                    cx.profile.sdk_package
                ),
            );
            c.code = Some("compat.requires_unsatisfied");
        } else {
            sdk_range(cx, range);
        }
    }
    let now = cx.state.now;
    if let Some(eol) = v.value(Key::EndOfLifeAt).and_then(parse_date) {
        if eol <= now {
            let superseded = v.superseded_by().map(str::to_owned);
            let c = cx.push(
                "compatibility",
                "endOfLifeAt",
                true,
                Outcome::Blocked,
                format!("this release reached end of life on {eol}"),
            );
            c.code = Some("compat.end_of_life");
            c.remediation = Some(match superseded {
                Some(s) => format!("install {s} instead"),
                None => "install a supported release".into(),
            });
        }
    }
    if let Some(dep) = v.value(Key::DeprecatedAt).and_then(parse_date) {
        if dep <= now {
            cx.push(
                "compatibility",
                "deprecatedAt",
                false,
                Outcome::Notice,
                format!("this release is deprecated since {dep}"),
            );
        }
    }
}

/// `requires.sdk`'s range against every SDK release this host provides (`compat::sdk`): an app
/// written for an older release of the compatible line passes; the hint says "update AppHost"
/// only when a newer SDK could satisfy the range.
fn sdk_range(cx: &mut Ctx, range: &str) {
    let provided = provided_sdk_versions(&cx.profile.sdk_version);
    let line = match (provided.first(), provided.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
        (_, Some(b)) => b.to_string(),
        _ => cx.profile.sdk_version.clone(),
    };
    let have = cx.profile.sdk_version.clone();
    let parsed = match Range::parse(range) {
        Ok(r) => r,
        Err(e) => {
            let c = cx.push("compatibility", "requires.sdk", true, Outcome::Blocked, e);
            c.code = Some("compat.invalid_range");
            c.version = Some(range.into());
            return;
        }
    };
    let (outcome, detail, remediation) = match sdk_fit(&parsed, &provided) {
        SdkFit::Provided(v) if v.to_string() == have => {
            (Outcome::Pass, format!("the SDK {have} satisfies {range}"), None)
        }
        SdkFit::Provided(v) => (
            Outcome::Pass,
            format!("the SDK {have} serves apps written for {v}, which satisfies {range} (each release keeps the apps of the one before)"),
            None,
        ),
        SdkFit::NeedsNewer => (
            Outcome::Blocked,
            format!("the app needs SDK {range}; this AppHost provides {line}"),
            Some("update AppHost, or install a release of the app written for an SDK it provides".to_owned()),
        ),
        SdkFit::NeverProvided => (
            Outcome::Blocked,
            format!("the app needs SDK {range}, which no AppHost provides: this one serves apps written for {line}"),
            Some(format!("install a newer release of the app (one written for SDK {line})")),
        ),
    };
    let blocked = outcome == Outcome::Blocked;
    let c = cx.push("compatibility", "requires.sdk", true, outcome, detail);
    c.version = Some(range.into());
    if blocked {
        c.code = Some("compat.requires_unsatisfied");
        c.remediation = remediation;
    }
}

fn check_range(cx: &mut Ctx, kind: &'static str, key: String, range: &str, have: &str, what: &str) {
    match (Range::parse(range), parse_version(have)) {
        (Ok(r), Some(v)) if r.matches(&v) => {
            let c = cx.push(
                kind,
                key,
                true,
                Outcome::Pass,
                format!("{what} {have} satisfies {range}"),
            );
            c.version = Some(range.into());
        }
        (Ok(r), v) => {
            // "Update AppHost" only when a newer version could satisfy the range.
            let newer_helps = v.is_none_or(|v| r.admits_above(&v));
            let c = cx.push(
                kind,
                key,
                true,
                Outcome::Blocked,
                format!("{what} is {have}; the app needs {range}"),
            );
            c.code = Some("compat.requires_unsatisfied");
            c.version = Some(range.into());
            c.remediation = Some(if newer_helps {
                "install a release of the app compatible with this AppHost, or update AppHost"
                    .into()
            } else {
                "install a newer release of the app: no newer AppHost satisfies this requirement"
                    .into()
            });
        }
        (Err(e), _) => {
            let c = cx.push(kind, key, true, Outcome::Blocked, e);
            c.code = Some("compat.invalid_range");
            c.version = Some(range.into());
        }
    }
}

pub(super) fn install_modes(cx: &mut Ctx) {
    let Some(modes) = cx.m.view().install_modes() else {
        return;
    };
    if !modes.iter().any(|m| m.as_str() == Some("in_lime")) {
        let list = modes
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let c = cx.push(
            "install",
            "install.modes",
            true,
            Outcome::Blocked,
            format!("the app installs only as {list}; AppHost hosts in_lime apps"),
        );
        c.code = Some("install.mode_unsupported");
    }
}
