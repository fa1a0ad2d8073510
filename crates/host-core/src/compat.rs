//! Version ranges and lifecycle dates.
//!
//! Ranges use the npm grammar the standard's examples use (`^0.3.0`, `>=0.3.0 <1.0.0`,
//! `~1.2`, `1.x`, `a - b`, `r1 || r2`) and are evaluated with the `semver` crate. The literal
//! `current` (used by the standard's examples) means "the host's current version" and always
//! matches.

use semver::{Version, VersionReq};
use serde_json::Value;

/// A parsed npm-style range: any of the alternatives matches.
#[derive(Debug, Clone)]
pub struct Range {
    alternatives: Vec<VersionReq>,
    any: bool,
}

impl Range {
    pub fn parse(text: &str) -> Result<Range, String> {
        let t = text.trim();
        if t.is_empty()
            || t == "*"
            || t.eq_ignore_ascii_case("current")
            || t.eq_ignore_ascii_case("latest")
        {
            return Ok(Range {
                alternatives: Vec::new(),
                any: true,
            });
        }
        let mut alternatives = Vec::new();
        for alt in t.split("||") {
            let req = npm_to_semver(alt.trim())
                .ok_or_else(|| format!("{text:?} is not a version range"))?;
            alternatives.push(
                VersionReq::parse(&req)
                    .map_err(|e| format!("{text:?} is not a version range: {e}"))?,
            );
        }
        Ok(Range {
            alternatives,
            any: false,
        })
    }

    pub fn matches(&self, v: &Version) -> bool {
        self.any || self.alternatives.iter().any(|r| r.matches(v))
    }
}

/// Rewrites one npm range (no `||`) into `semver` comparator syntax.
fn npm_to_semver(r: &str) -> Option<String> {
    if r.is_empty() {
        return Some("*".into());
    }
    let tokens: Vec<&str> = r.split_whitespace().collect();
    // Hyphen range: "a - b"
    if tokens.len() == 3 && tokens[1] == "-" {
        return Some(format!(">={}, <={}", tokens[0], tokens[2]));
    }
    // Join operators separated from their versions (">= 1.0.0").
    let mut comps: Vec<String> = Vec::new();
    let mut pending: Option<&str> = None;
    for tok in tokens {
        if matches!(tok, ">" | ">=" | "<" | "<=" | "=" | "^" | "~") {
            pending = Some(tok);
            continue;
        }
        let tok = tok.strip_prefix('v').unwrap_or(tok);
        comps.push(match pending.take() {
            Some(op) => format!("{op}{tok}"),
            None => tok.to_owned(),
        });
    }
    if pending.is_some() || comps.is_empty() {
        return None;
    }
    Some(
        comps
            .iter()
            .map(|c| c.replace(".x", ".*").replace(".X", ".*"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

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

    fn m(range: &str, v: &str) -> bool {
        Range::parse(range)
            .unwrap()
            .matches(&Version::parse(v).unwrap())
    }

    #[test]
    fn npm_ranges() {
        assert!(m("^0.10.0", "0.10.3"));
        assert!(!m("^0.10.0", "0.11.0"));
        assert!(m(">=0.3.0 <1.0.0", "0.10.0"));
        assert!(!m(">=0.3.0 <1.0.0", "1.0.0"));
        assert!(m(">= 0.3.0", "0.3.0"));
        assert!(m("~1.2", "1.2.9"));
        assert!(m("1.x", "1.9.0"));
        assert!(m("0.1.0 - 0.2.0", "0.2.0"));
        assert!(m("^1.0.0 || ^0.10.0", "0.10.1"));
        assert!(m("current", "0.0.1"));
        assert!(m("*", "9.9.9"));
        assert!(Range::parse("banana").is_err());
        assert!(Range::parse(">=").is_err());
    }

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
