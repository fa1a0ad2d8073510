//! Version ranges and lifecycle dates.
//!
//! Ranges follow npm (node-semver) semantics: see `compat/range.rs`. The literal `current` (used by the
//! standard's examples) means "the host's current version" and always matches.

mod range;
mod sdk;

pub use range::Range;
pub use sdk::{provided_sdk_versions, sdk_fit, SdkFit};

use semver::Version;
use serde_json::Value;

/// Parses a version leniently: `1.2` → `1.2.0`, leading `v` allowed.
pub fn parse_version(text: &str) -> Option<Version> {
    let t = text.trim().strip_prefix('v').unwrap_or(text.trim());
    Version::parse(t)
        .ok()
        .or_else(|| match t.matches('.').count() {
            0 => Version::parse(&format!("{t}.0.0")).ok(),
            1 => Version::parse(&format!("{t}.0")).ok(),
            _ => None,
        })
}

/// Splits `@scope/pkg@^1.0.0` into (`@scope/pkg`, `^1.0.0`); a bare name has range `*`.
pub fn split_package_spec(spec: &str) -> (&str, &str) {
    match spec[1.min(spec.len())..].rfind('@') {
        Some(i) => (&spec[..i + 1], &spec[i + 2..]),
        None => (spec, "*"),
    }
}

/// An ISO 8601 date-time (`2026-01-08T00:00:00Z`) or date (`2026-01-08`, read as 00:00 UTC).
pub fn parse_date(v: &Value) -> Option<jiff::Timestamp> {
    let s = v.as_str()?.trim();
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts);
    }
    let date: jiff::civil::Date = s.parse().ok()?;
    date.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_specs() {
        assert_eq!(
            split_package_spec("@lime/app-sdk@^0.3.0"),
            ("@lime/app-sdk", "^0.3.0")
        );
        assert_eq!(split_package_spec("@lime/app-sdk"), ("@lime/app-sdk", "*"));
        assert_eq!(split_package_spec("sdk@1"), ("sdk", "1"));
    }

    #[test]
    fn dates() {
        assert!(parse_date(&Value::from("2026-01-08T00:00:00Z")).is_some());
        assert!(parse_date(&Value::from("2026-01-08")).is_some());
        assert!(parse_date(&Value::from("yesterday")).is_none());
        assert!(parse_date(&Value::from(5)).is_none());
    }
}
