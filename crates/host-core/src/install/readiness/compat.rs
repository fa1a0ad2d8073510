//! Compatibility checks: `requires.lime.*`, `requires.sdk`, end of life, deprecation and install modes.

use serde_json::Value;

use super::{Ctx, Outcome};
use crate::install::compat::{parse_date, parse_version, split_package_spec, Range};
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
            let have = cx.profile.sdk_version.clone();
            check_range(
                cx,
                "compatibility",
                "requires.sdk".into(),
                range,
                &have,
                "the SDK",
            );
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
        (Ok(_), _) => {
            let c = cx.push(
                kind,
                key,
                true,
                Outcome::Blocked,
                format!("{what} is {have}; the app needs {range}"),
            );
            c.code = Some("compat.requires_unsatisfied");
            c.version = Some(range.into());
            c.remediation = Some(
                "install a release of the app compatible with this AppHost, or update AppHost"
                    .into(),
            );
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
