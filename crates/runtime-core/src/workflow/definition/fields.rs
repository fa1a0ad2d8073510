//! Typed reads of one JSON object's fields, each refusal a finding at the field's path.

use serde_json::{Map, Value};

use crate::workflow::expr::Expr;
use crate::workflow::finding::{clip, code, Findings};
use crate::workflow::limits::*;
use crate::workflow::template::Template;

pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

impl<'a> Obj<'a> {
    pub fn new(v: &'a Value, path: &str, what: &str, f: &mut Findings) -> Option<Obj<'a>> {
        match v.as_object() {
            Some(map) => Some(Obj {
                map,
                path: path.to_string(),
            }),
            None => {
                f.error(
                    code::INVALID_FIELD,
                    path,
                    format!("{what} must be an object"),
                );
                None
            }
        }
    }

    pub fn at(&self, name: &str) -> String {
        format!("{}/{}", self.path, name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name)
    }

    /// Reports keys outside `allowed` (and not `x-` extensions) with `severity_error` or as warnings.
    pub fn unknown_keys(&self, allowed: &[&str], severity_error: bool, f: &mut Findings) {
        for k in self.map.keys() {
            if allowed.contains(&k.as_str()) || k.starts_with("x-") {
                continue;
            }
            let shown = clip(k, MAX_KEY_LEN);
            let msg = format!("unknown field {shown:?}");
            if severity_error {
                f.error(code::UNKNOWN_FIELD, self.at(k), msg);
            } else {
                f.warning(code::UNKNOWN_FIELD, self.at(k), msg);
            }
        }
    }

    pub fn required<T>(&self, name: &str, v: Option<T>, f: &mut Findings) -> Option<T> {
        if v.is_none() && !self.has(name) {
            f.error(
                code::MISSING_FIELD,
                self.at(name),
                format!("{name} is required"),
            );
        }
        v
    }

    /// A string of at most `max` bytes.
    pub fn string(&self, name: &str, max: usize, f: &mut Findings) -> Option<&'a str> {
        let v = self.get(name)?;
        match v.as_str() {
            Some("") => {
                f.error(
                    code::INVALID_FIELD,
                    self.at(name),
                    format!("{name} is empty"),
                );
                None
            }
            Some(s) if s.len() > max => {
                f.error(
                    code::TOO_LARGE,
                    self.at(name),
                    format!("{name} is over {max} bytes"),
                );
                None
            }
            Some(s) => Some(s),
            None => {
                f.error(
                    code::INVALID_FIELD,
                    self.at(name),
                    format!("{name} must be a string"),
                );
                None
            }
        }
    }

    /// A state key (or a reference to one).
    pub fn state_ref(&self, name: &str, f: &mut Findings) -> Option<String> {
        let s = self.string(name, MAX_KEY_LEN, f)?;
        if !is_state_key(s) {
            f.error(
                code::INVALID_KEY,
                self.at(name),
                format!("{s:?} is not a state key"),
            );
            return None;
        }
        Some(s.to_string())
    }

    pub fn uint(&self, name: &str, min: u64, max: u64, f: &mut Findings) -> Option<u64> {
        let v = self.get(name)?;
        match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                f.error(
                    code::INVALID_FIELD,
                    self.at(name),
                    format!("{name} must be an integer from {min} to {max}"),
                );
                None
            }
        }
    }

    pub fn bool(&self, name: &str, f: &mut Findings) -> Option<bool> {
        let v = self.get(name)?;
        let b = v.as_bool();
        if b.is_none() {
            f.error(
                code::INVALID_FIELD,
                self.at(name),
                format!("{name} must be true or false"),
            );
        }
        b
    }

    /// A duration: integer milliseconds, or a string `<n>ms|s|m|h|d`.
    pub fn duration(&self, name: &str, f: &mut Findings) -> Option<u64> {
        let v = self.get(name)?;
        let ms = match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => parse_duration(s),
            _ => None,
        };
        match ms {
            Some(ms) if (1..=MAX_DURATION_MS).contains(&ms) => Some(ms),
            _ => {
                f.error(
                    code::INVALID_FIELD,
                    self.at(name),
                    format!("{name} must be 1 ms to 30 days: milliseconds or \"<n>ms|s|m|h|d\""),
                );
                None
            }
        }
    }

    pub fn expr(&self, name: &str, f: &mut Findings) -> Option<Expr> {
        let v = self.get(name)?;
        let Some(s) = v.as_str() else {
            f.error(
                code::INVALID_FIELD,
                self.at(name),
                format!("{name} must be an expression string"),
            );
            return None;
        };
        match Expr::compile(s) {
            Ok(e) => Some(e),
            Err(e) => {
                f.error(e.code, self.at(name), e.message);
                None
            }
        }
    }

    pub fn template(&self, name: &str, f: &mut Findings) -> Option<Template> {
        let v = self.get(name)?;
        match Template::compile(v) {
            Ok(t) => Some(t),
            Err(errors) => {
                for e in errors {
                    f.error(
                        e.error.code,
                        format!("{}{}", self.at(name), e.at),
                        e.error.message,
                    );
                }
                None
            }
        }
    }
}

/// `[A-Za-z0-9][A-Za-z0-9_.:-]*`, at most [`MAX_KEY_LEN`] bytes (the schema's key alphabet).
pub fn is_state_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_KEY_LEN
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// `[A-Za-z_][A-Za-z0-9_]*`: an output name is read as `outputs.<name>`, so it is a CEL identifier.
pub fn is_output_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_KEY_LEN
        && (s.as_bytes()[0].is_ascii_alphabetic() || s.as_bytes()[0] == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

pub fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = s.split_at(split);
    if num.is_empty() || num.len() > 12 {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// Depth of a JSON value, without recursion; stops counting past `limit`.
pub fn depth_exceeds(v: &Value, limit: usize) -> bool {
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    false
}
