//! The host's one source of random ids: bytes from the OS, as lowercase hex. A failing OS
//! generator is an error (`store.io`), never a panic or a weaker fallback.

use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// `bytes` random bytes from the OS, as `2 * bytes` lowercase hex digits.
pub fn random_hex(bytes: usize) -> HostResult<String> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).map_err(|e| {
        HostError::new(
            ErrorCode::StoreIo,
            format!("the system's random number generator failed: {e}"),
        )
    })?;
    Ok(hex::encode(b))
}

/// A fresh random 128-bit id (32 hex digits): operation, pack, upload and review ids never
/// repeat, even for two made in the same millisecond of the same process.
pub fn random_id() -> HostResult<String> {
    random_hex(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_of_the_asked_length_and_differ() {
        let a = random_id().unwrap();
        let b = random_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
        assert_eq!(random_hex(8).unwrap().len(), 16);
    }
}
