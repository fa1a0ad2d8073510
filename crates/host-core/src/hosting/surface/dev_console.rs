//! The frame side of the dev console (`apphost dev` installs only): every HTML page of a dev
//! install is served with one `<script src>` of [`SCRIPT_PATH`] put first into its `<head>`,
//! and that path serves `dev_console.js` from the app's own origin (so the CSP allows it, with
//! no `'unsafe-inline'`). The script runs before the app's own, so it reports an inline script
//! or style the CSP blocked, a remote image, an uncaught error, an unhandled rejection and a
//! `<form>` the sandbox will refuse even when the app's script never runs. It posts to the host
//! UI and nothing else; the host re-derives "dev install" where it takes the reports
//! (`api/dev_console.rs`). Installed (non-dev) apps are served byte for byte.

/// The path the script is served at, in every dev install's origin.
pub const SCRIPT_PATH: &str = "__apphost/dev-console.js";

const SCRIPT: &str = include_str!("dev_console.js");

/// The script, told whether the app declares `ui.frame.forms`.
pub fn script(forms: bool) -> Vec<u8> {
    SCRIPT
        .replace("__FORMS__", if forms { "true" } else { "false" })
        .into_bytes()
}

/// `html` with the script tag first inside `<head>` (else after `<html …>`, else after the
/// doctype, else at the start). A bounded scan of the first 64 KiB; bytes are never re-encoded.
pub fn inject(html: Vec<u8>) -> Vec<u8> {
    let tag = tag();
    let at = insertion_point(&html);
    let mut out = Vec::with_capacity(html.len() + tag.len());
    out.extend_from_slice(&html[..at]);
    out.extend_from_slice(tag.as_bytes());
    out.extend_from_slice(&html[at..]);
    out
}

fn tag() -> String {
    format!("<script src=\"/{SCRIPT_PATH}\"></script>")
}

const SCAN: usize = 64 * 1024;

fn insertion_point(html: &[u8]) -> usize {
    let head = &html[..html.len().min(SCAN)];
    for name in [&b"<head"[..], b"<html", b"<!doctype"] {
        if let Some(end) = after_tag(head, name) {
            return end;
        }
    }
    0
}

/// The index just past the `>` of the first tag `<name…>` (ASCII case-insensitive), where the
/// byte after the name ends it (`>`, space, `/`).
fn after_tag(html: &[u8], name: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + name.len() <= html.len() {
        if html[i..i + name.len()].eq_ignore_ascii_case(name) {
            let next = html.get(i + name.len()).copied();
            if matches!(next, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')) {
                let close = html[i..].iter().position(|&b| b == b'>')?;
                return Some(i + close + 1);
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injected(s: &str) -> String {
        String::from_utf8(inject(s.as_bytes().to_vec())).unwrap()
    }

    #[test]
    fn the_tag_goes_first_into_head() {
        let out = injected("<!doctype html><HTML lang=en><Head><title>x</title></head></html>");
        assert_eq!(
            out,
            "<!doctype html><HTML lang=en><Head><script src=\"/__apphost/dev-console.js\"></script><title>x</title></head></html>"
        );
    }

    #[test]
    fn without_head_after_html_or_doctype_or_at_the_start() {
        assert!(injected("<html><body>").starts_with("<html><script src="));
        assert!(injected("<!DOCTYPE html><p>hi").starts_with("<!DOCTYPE html><script src="));
        assert!(injected("<p>hi").starts_with("<script src="));
        // `<header>` is not `<head>`.
        assert!(injected("<header>x</header>").starts_with("<script src="));
    }

    #[test]
    fn an_unclosed_tag_or_binary_bytes_never_panic() {
        let out = inject(b"<head".to_vec());
        assert!(out.starts_with(b"<script src="));
        let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        assert_eq!(inject(bytes.clone()).len(), bytes.len() + tag().len());
    }

    #[test]
    fn the_script_knows_the_forms_flag() {
        let s = String::from_utf8(script(true)).unwrap();
        assert!(s.contains("const FORMS = true;"));
        assert!(!String::from_utf8(script(false))
            .unwrap()
            .contains("__FORMS__"));
    }
}
