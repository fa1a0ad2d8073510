//! npm version ranges, with node-semver's semantics (strict mode, prereleases not included).
//!
//! Grammar (node-semver `range.bnf`): a range is comparator sets joined by `||`; a set is
//! whitespace-separated comparators, or a hyphen range `a - b`. A comparator is an optional
//! operator (`<`, `<=`, `>`, `>=`, `=`, `~`, `~>`, `^`) followed by a possibly partial version
//! whose parts may be `x`, `X` or `*`. Each is desugared into plain comparators the way
//! node-semver does it:
//!
//! | written | means |
//! |---|---|
//! | `1.2.3`, `=1.2.3` | exactly 1.2.3 |
//! | `1.2`, `1.2.x` | `>=1.2.0 <1.3.0-0` |
//! | `1`, `1.x`, `1.x.x` | `>=1.0.0 <2.0.0-0` |
//! | `*`, `x`, `` (empty) | any release |
//! | `~1.2.3` / `~1.2` / `~1` | `>=1.2.3 <1.3.0-0` / `>=1.2.0 <1.3.0-0` / `>=1.0.0 <2.0.0-0` |
//! | `^1.2.3` / `^0.2.3` / `^0.0.3` | `>=1.2.3 <2.0.0-0` / `>=0.2.3 <0.3.0-0` / `>=0.0.3 <0.0.4-0` |
//! | `1.2 - 2.3.4` / `1.2.3 - 2.3` | `>=1.2.0 <=2.3.4` / `>=1.2.3 <2.4.0-0` |
//! | `>1.2` / `<=1.2` / `<1.2` | `>=1.3.0` / `<1.3.0-0` / `<1.2.0-0` |
//!
//! A prerelease version (`1.2.3-beta`) satisfies a set only if some comparator of that set names
//! a prerelease of the same `major.minor.patch` (so `^1.2.3-alpha` admits `1.2.3-beta` but `*`
//! and `^1.2.0` admit no prerelease). Build metadata is ignored.

use std::cmp::Ordering;
use std::fmt;

use semver::{BuildMetadata, Prerelease, Version};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// A full version used as a comparator bound (no build metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bound {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Prerelease,
}

impl Bound {
    fn new(major: u64, minor: u64, patch: u64) -> Self {
        Bound {
            major,
            minor,
            patch,
            pre: Prerelease::EMPTY,
        }
    }

    /// The lowest version of this `major.minor.patch`: `x.y.z-0`.
    fn lowest(major: u64, minor: u64, patch: u64) -> Self {
        Bound {
            pre: Prerelease::new("0").expect("0 is a prerelease"),
            ..Bound::new(major, minor, patch)
        }
    }

    fn same_triple(&self, v: &Version) -> bool {
        (self.major, self.minor, self.patch) == (v.major, v.minor, v.patch)
    }

    /// SemVer precedence of `v` against this bound (build metadata plays no part).
    fn compare(&self, v: &Version) -> Ordering {
        (v.major, v.minor, v.patch)
            .cmp(&(self.major, self.minor, self.patch))
            .then_with(|| v.pre.cmp(&self.pre))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    bound: Bound,
}

impl Comparator {
    fn new(op: Op, bound: Bound) -> Self {
        Comparator { op, bound }
    }

    /// `<0.0.0-0`: matches nothing.
    fn nothing() -> Self {
        Comparator::new(Op::Lt, Bound::lowest(0, 0, 0))
    }

    fn is_nothing(&self) -> bool {
        *self == Comparator::nothing()
    }

    fn matches(&self, v: &Version) -> bool {
        let o = self.bound.compare(v);
        match self.op {
            Op::Lt => o == Ordering::Less,
            Op::Le => o != Ordering::Greater,
            Op::Gt => o == Ordering::Greater,
            Op::Ge => o != Ordering::Less,
            Op::Eq => o == Ordering::Equal,
        }
    }
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "",
        };
        let b = &self.bound;
        write!(f, "{op}{}.{}.{}", b.major, b.minor, b.patch)?;
        if !b.pre.is_empty() {
            write!(f, "-{}", b.pre)?;
        }
        Ok(())
    }
}

/// A parsed npm range: a version matches if it satisfies every comparator of any one set.
#[derive(Debug, Clone)]
pub struct Range {
    /// An empty set matches every release (`*`).
    sets: Vec<Vec<Comparator>>,
    /// The literal `current` / `latest`: the host's own version, whatever it is.
    current: bool,
}

impl Range {
    pub fn parse(text: &str) -> Result<Range, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("current") || t.eq_ignore_ascii_case("latest") {
            return Ok(Range {
                sets: vec![Vec::new()],
                current: true,
            });
        }
        let mut sets = Vec::new();
        for alt in t.split("||") {
            let set =
                parse_set(alt).map_err(|why| format!("{text:?} is not a version range: {why}"))?;
            sets.push(set);
        }
        Ok(Range {
            sets,
            current: false,
        })
    }

    pub fn matches(&self, v: &Version) -> bool {
        self.current || self.sets.iter().any(|s| set_matches(s, v))
    }

    /// Whether some release newer than `v` satisfies the range: whether a newer host (or SDK)
    /// could ever satisfy it. Within one set the releases that match form an interval, so the
    /// smallest release above both `v` and the set's lower bounds decides.
    pub fn admits_above(&self, v: &Version) -> bool {
        if self.current {
            return true;
        }
        let next = |major: u64, minor: u64, patch: u64| Version::new(major, minor, patch + 1);
        let above_v = if v.pre.is_empty() {
            next(v.major, v.minor, v.patch)
        } else {
            Version::new(v.major, v.minor, v.patch)
        };
        self.sets.iter().any(|set| {
            let mut candidates = vec![above_v.clone()];
            for c in set {
                let b = &c.bound;
                let release = Version::new(b.major, b.minor, b.patch);
                match c.op {
                    // `>=x.y.z-pre` / `>x.y.z-pre` first admit the release x.y.z.
                    Op::Ge | Op::Eq => candidates.push(release),
                    Op::Gt if !b.pre.is_empty() => candidates.push(release),
                    Op::Gt => candidates.push(next(b.major, b.minor, b.patch)),
                    Op::Lt | Op::Le => {}
                }
            }
            candidates.iter().any(|w| w > v && set_matches(set, w))
        })
    }
}

fn set_matches(set: &[Comparator], v: &Version) -> bool {
    if !set.iter().all(|c| c.matches(v)) {
        return false;
    }
    // node-semver: a prerelease only satisfies a set that names a prerelease of its triple.
    v.pre.is_empty()
        || set
            .iter()
            .any(|c| !c.bound.pre.is_empty() && c.bound.same_triple(v))
}

/// The canonical form node-semver prints (`new Range(r).range`).
impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.current || self.sets.iter().any(Vec::is_empty) {
            return f.write_str("*");
        }
        let non_null: Vec<&Vec<Comparator>> = self
            .sets
            .iter()
            .filter(|s| !s.iter().any(Comparator::is_nothing))
            .collect();
        if non_null.is_empty() {
            return write!(f, "{}", Comparator::nothing());
        }
        for (i, set) in non_null.iter().enumerate() {
            if i > 0 {
                f.write_str("||")?;
            }
            for (j, c) in set.iter().enumerate() {
                if j > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

const OPERATORS: &[&str] = &["<", "<=", ">", ">=", "=", "~", "~>", "^"];

fn parse_set(text: &str) -> Result<Vec<Comparator>, String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    if tokens.len() == 3 && tokens[1] == "-" {
        hyphen(&partial(tokens[0])?, &partial(tokens[2])?, &mut out)?;
        return Ok(finish_set(out));
    }
    // An operator may be separated from its version by spaces (`>= 1.2.3`, `~> 1`, `^ 1`).
    let mut pending: Option<&str> = None;
    for tok in tokens {
        if OPERATORS.contains(&tok) {
            if pending.is_some() {
                return Err(format!("operator {tok:?} follows another operator"));
            }
            pending = Some(tok);
            continue;
        }
        let joined;
        let tok = match pending.take() {
            Some(op) => {
                joined = format!("{op}{tok}");
                joined.as_str()
            }
            None => tok,
        };
        comparator(tok, &mut out)?;
    }
    if let Some(op) = pending {
        return Err(format!("operator {op:?} has no version"));
    }
    Ok(finish_set(out))
}

/// Drops `>=0.0.0` (node-semver does: it adds nothing) and repeated comparators.
fn finish_set(set: Vec<Comparator>) -> Vec<Comparator> {
    let mut out: Vec<Comparator> = Vec::with_capacity(set.len());
    for c in set {
        if c == Comparator::new(Op::Ge, Bound::new(0, 0, 0)) || out.contains(&c) {
            continue;
        }
        out.push(c);
    }
    out
}

/// A version whose parts may be missing or wildcards (`None`).
#[derive(Debug)]
struct Partial {
    major: Option<u64>,
    minor: Option<u64>,
    patch: Option<u64>,
    pre: Prerelease,
}

impl Partial {
    fn full(&self) -> Option<Bound> {
        Some(Bound {
            major: self.major?,
            minor: self.minor?,
            patch: self.patch?,
            pre: self.pre.clone(),
        })
    }
}

fn partial(text: &str) -> Result<Partial, String> {
    // node-semver allows `v` and `=` before a version (`v1.2.3`, `=1.2.3`).
    let s = text.trim_start_matches(['v', '=']);
    let core_end = s.find(['-', '+']).unwrap_or(s.len());
    let (core, rest) = s.split_at(core_end);
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() > 3 {
        return Err(format!("{text:?} has more than three version parts"));
    }
    let mut nums = [None; 3];
    let mut wild = false;
    for (i, part) in parts.iter().enumerate() {
        if matches!(*part, "x" | "X" | "*") {
            wild = true;
            continue;
        }
        let n = number(part).ok_or_else(|| format!("{text:?} is not a version"))?;
        if !wild {
            nums[i] = Some(n);
        }
    }
    let (pre_text, build_text) = match rest.strip_prefix('-') {
        Some(r) => match r.split_once('+') {
            Some((p, b)) => (Some(p), Some(b)),
            None => (Some(r), None),
        },
        None => (None, rest.strip_prefix('+')),
    };
    if pre_text == Some("") || build_text == Some("") {
        return Err(format!("{text:?} has an empty prerelease or build"));
    }
    if !rest.is_empty() && parts.len() != 3 {
        return Err(format!(
            "{text:?}: a prerelease or build needs major.minor.patch"
        ));
    }
    let pre = match pre_text {
        Some(p) => Prerelease::new(p).map_err(|e| format!("{text:?}: {e}"))?,
        None => Prerelease::EMPTY,
    };
    if let Some(b) = build_text {
        BuildMetadata::new(b).map_err(|e| format!("{text:?}: {e}"))?;
    }
    Ok(Partial {
        major: nums[0],
        minor: nums[1],
        patch: nums[2],
        pre,
    })
}

/// A numeric identifier: `0` or digits without a leading zero.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

fn inc(n: u64) -> Result<u64, String> {
    n.checked_add(1)
        .ok_or_else(|| "a version number is too large".to_owned())
}

fn comparator(tok: &str, out: &mut Vec<Comparator>) -> Result<(), String> {
    for (prefix, kind) in [
        ("~>", "~"),
        ("~", "~"),
        ("^", "^"),
        (">=", ">="),
        ("<=", "<="),
        (">", ">"),
        ("<", "<"),
        ("=", "="),
    ] {
        if let Some(rest) = tok.strip_prefix(prefix) {
            let p = partial(rest)?;
            return match kind {
                "~" => tilde(&p, out),
                "^" => caret(&p, out),
                _ => xrange(kind, &p, out),
            };
        }
    }
    xrange("", &partial(tok)?, out)
}

fn push_span(out: &mut Vec<Comparator>, lo: Bound, hi: Bound) {
    out.push(Comparator::new(Op::Ge, lo));
    out.push(Comparator::new(Op::Lt, hi));
}

fn tilde(p: &Partial, out: &mut Vec<Comparator>) -> Result<(), String> {
    match (p.major, p.minor, p.full()) {
        (None, _, _) => {}
        (Some(ma), None, _) => push_span(out, Bound::new(ma, 0, 0), Bound::lowest(inc(ma)?, 0, 0)),
        (Some(ma), Some(mi), None) => {
            push_span(out, Bound::new(ma, mi, 0), Bound::lowest(ma, inc(mi)?, 0))
        }
        (Some(ma), Some(mi), Some(b)) => push_span(out, b, Bound::lowest(ma, inc(mi)?, 0)),
    }
    Ok(())
}

fn caret(p: &Partial, out: &mut Vec<Comparator>) -> Result<(), String> {
    match (p.major, p.minor, p.full()) {
        (None, _, _) => {}
        (Some(ma), None, _) => push_span(out, Bound::new(ma, 0, 0), Bound::lowest(inc(ma)?, 0, 0)),
        (Some(0), Some(mi), None) => {
            push_span(out, Bound::new(0, mi, 0), Bound::lowest(0, inc(mi)?, 0))
        }
        (Some(ma), Some(mi), None) => {
            push_span(out, Bound::new(ma, mi, 0), Bound::lowest(inc(ma)?, 0, 0))
        }
        (Some(0), Some(0), Some(b)) => {
            let hi = Bound::lowest(0, 0, inc(b.patch)?);
            push_span(out, b, hi)
        }
        (Some(0), Some(mi), Some(b)) => push_span(out, b, Bound::lowest(0, inc(mi)?, 0)),
        (Some(ma), Some(_), Some(b)) => push_span(out, b, Bound::lowest(inc(ma)?, 0, 0)),
    }
    Ok(())
}

/// A comparator whose version may be partial (node-semver's `replaceXRange`).
fn xrange(op: &str, p: &Partial, out: &mut Vec<Comparator>) -> Result<(), String> {
    if let Some(b) = p.full() {
        let op = match op {
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            _ => Op::Eq,
        };
        out.push(Comparator::new(op, b));
        return Ok(());
    }
    let Some(ma) = p.major else {
        // `*` with an operator: `>*` and `<*` admit nothing, the others everything.
        if matches!(op, ">" | "<") {
            out.push(Comparator::nothing());
        }
        return Ok(());
    };
    let mi = p.minor;
    match op {
        "" | "=" => match mi {
            None => push_span(out, Bound::new(ma, 0, 0), Bound::lowest(inc(ma)?, 0, 0)),
            Some(mi) => push_span(out, Bound::new(ma, mi, 0), Bound::lowest(ma, inc(mi)?, 0)),
        },
        ">" => {
            let b = match mi {
                None => Bound::new(inc(ma)?, 0, 0),
                Some(mi) => Bound::new(ma, inc(mi)?, 0),
            };
            out.push(Comparator::new(Op::Ge, b));
        }
        ">=" => out.push(Comparator::new(Op::Ge, Bound::new(ma, mi.unwrap_or(0), 0))),
        "<=" => {
            let b = match mi {
                None => Bound::lowest(inc(ma)?, 0, 0),
                Some(mi) => Bound::lowest(ma, inc(mi)?, 0),
            };
            out.push(Comparator::new(Op::Lt, b));
        }
        _ => out.push(Comparator::new(
            Op::Lt,
            Bound::lowest(ma, mi.unwrap_or(0), 0),
        )),
    }
    Ok(())
}

/// `a - b` (node-semver's `hyphenReplace`): a partial lower end fills with zeros, a partial
/// upper end admits everything below the next major or minor.
fn hyphen(from: &Partial, to: &Partial, out: &mut Vec<Comparator>) -> Result<(), String> {
    match (from.major, from.minor, from.full()) {
        (None, _, _) => {}
        (Some(ma), None, _) => out.push(Comparator::new(Op::Ge, Bound::new(ma, 0, 0))),
        (Some(ma), Some(mi), None) => out.push(Comparator::new(Op::Ge, Bound::new(ma, mi, 0))),
        (_, _, Some(b)) => out.push(Comparator::new(Op::Ge, b)),
    }
    match (to.major, to.minor, to.full()) {
        (None, _, _) => {}
        (Some(ma), None, _) => out.push(Comparator::new(Op::Lt, Bound::lowest(inc(ma)?, 0, 0))),
        (Some(ma), Some(mi), None) => {
            out.push(Comparator::new(Op::Lt, Bound::lowest(ma, inc(mi)?, 0)))
        }
        (_, _, Some(b)) => out.push(Comparator::new(Op::Le, b)),
    }
    Ok(())
}

#[cfg(test)]
mod tests;
