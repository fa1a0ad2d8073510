//! The door's per-launch token: 32 random bytes as 64 hex characters, compared in constant
//! time (the time taken depends on the lengths only, never on where the first difference is).

/// A fresh token.
pub fn fresh() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `given` equals `expected`, compared without an early exit.
pub fn matches(expected: &str, given: &str) -> bool {
    let (a, b) = (expected.as_bytes(), given.as_bytes());
    let mut diff = (a.len() ^ b.len()) as u8 | u8::from(a.len() != b.len());
    for (i, x) in a.iter().enumerate() {
        diff |= x ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0 && !a.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_token_matches() {
        let t = fresh().unwrap();
        assert_eq!(t.len(), 64);
        assert!(matches(&t, &t.clone()));
        assert!(!matches(&t, ""));
        assert!(!matches(&t, &t[..63]));
        assert!(!matches(&t, &format!("{t}0")));
        let mut other = t.clone().into_bytes();
        other[63] = if other[63] == b'0' { b'1' } else { b'0' };
        assert!(!matches(&t, std::str::from_utf8(&other).unwrap()));
        assert!(!matches("", ""), "an empty expected token never matches");
        assert_ne!(fresh().unwrap(), t);
    }
}
