//! Who may ask `apphost serve` for what: the `Host` header (DNS rebinding), the `Origin` of API
//! calls, the one-time launch token, the session cookie and secret it is exchanged for (why the
//! API trusts the secret and not the cookie: [`super::http`]).
//!
//! Pure functions over header values, unit-tested here and end to end in `tests/serve_http.rs`.

use host_core::hosting::surface::origin::is_app_host_label;

/// What a request's `Host` header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKind {
    /// The host UI: `<ui-host>:<port>` exactly.
    HostUi,
    /// An app origin: `<label>.localhost:<port>`, `label` a valid per-app host label.
    App(String),
    /// Anything else (another name pointing at this address, a missing or other port).
    Foreign,
}

/// The names the server answers to.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// The host UI's host (`127.0.0.1`, or the `--listen` address), without the port.
    pub ui_host: String,
    pub port: u16,
}

impl Hosts {
    /// `http://<ui-host>:<port>`: the host UI's origin, and the only one allowed to call the API
    /// or frame an app.
    pub fn ui_origin(&self) -> String {
        format!("http://{}", self.ui_authority())
    }

    fn ui_authority(&self) -> String {
        if self.ui_host.contains(':') {
            format!("[{}]:{}", self.ui_host, self.port)
        } else {
            format!("{}:{}", self.ui_host, self.port)
        }
    }

    /// Classifies a `Host` header value (ASCII case-insensitive, port required).
    pub fn classify(&self, host: Option<&[u8]>) -> HostKind {
        let Some(host) = host.and_then(|h| std::str::from_utf8(h).ok()) else {
            return HostKind::Foreign;
        };
        let host = host.to_ascii_lowercase();
        if host == self.ui_authority() {
            return HostKind::HostUi;
        }
        let suffix = format!(".localhost:{}", self.port);
        match host.strip_suffix(&suffix) {
            Some(label) if is_app_host_label(label) => HostKind::App(label.to_owned()),
            _ => HostKind::Foreign,
        }
    }

    /// Whether an `Origin` header is the host UI's own origin (exactly; `null` and absent are not).
    pub fn is_ui_origin(&self, origin: Option<&[u8]>) -> bool {
        origin.is_some_and(|o| o.eq_ignore_ascii_case(self.ui_origin().as_bytes()))
    }
}

/// Compares two secrets without an early exit on the first differing byte.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Every value of cookie `name` in a `Cookie` header, in order. A browser sends each cookie of
/// that name it holds (another loopback port can plant more, e.g. with `path=/api`): the caller
/// accepts the request if any of them is valid, so planted junk never hides the real one.
pub fn cookies<'a>(header: &'a [u8], name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
    header.split(|&b| b == b';').filter_map(move |pair| {
        let pair = trim(pair);
        let eq = pair.iter().position(|&b| b == b'=')?;
        (&pair[..eq] == name.as_bytes()).then(|| trim(&pair[eq + 1..]))
    })
}

/// The value of query parameter `name` (not percent-decoded: tokens are hex).
pub fn query_param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_core::hosting::surface::origin::app_host_label;

    fn hosts() -> Hosts {
        Hosts {
            ui_host: "127.0.0.1".into(),
            port: 4242,
        }
    }

    #[test]
    fn only_the_host_ui_and_app_labels_on_our_port_are_answered() {
        let h = hosts();
        let kind = |v: &str| h.classify(Some(v.as_bytes()));
        assert_eq!(kind("127.0.0.1:4242"), HostKind::HostUi);
        assert_eq!(
            kind("hello-app.localhost:4242"),
            HostKind::App("hello-app".into())
        );
        assert_eq!(
            kind("HELLO-APP.localhost:4242"),
            HostKind::App("hello-app".into())
        );
        let encoded = app_host_label("My_App");
        assert_eq!(
            kind(&format!("{encoded}.localhost:4242")),
            HostKind::App(encoded.clone())
        );
        for foreign in [
            "127.0.0.1",
            "127.0.0.1:4243",
            "localhost:4242",
            "evil.example:4242",
            "hello-app.localhost",
            "hello-app.localhost:4243",
            "a.b.localhost:4242",
            ".localhost:4242",
            "-x.localhost:4242",
            "localhost.localhost:4242",
            "x_y.localhost:4242",
            "h--x.localhost:4242",
            "hello-app.localhost:4242.evil.example",
            "[::1]:4242",
            "",
        ] {
            assert_eq!(kind(foreign), HostKind::Foreign, "{foreign}");
        }
        assert_eq!(h.classify(None), HostKind::Foreign);
        assert_eq!(h.classify(Some(b"\xff:4242")), HostKind::Foreign);
    }

    #[test]
    fn only_the_host_ui_origin_may_call_the_api() {
        let h = hosts();
        assert!(h.is_ui_origin(Some(b"http://127.0.0.1:4242")));
        for other in [
            &b"http://hello-app.localhost:4242"[..],
            b"null",
            b"http://127.0.0.1:4243",
            b"http://localhost:4242",
            b"https://127.0.0.1:4242",
            b"http://127.0.0.1:4242/",
        ] {
            assert!(
                !h.is_ui_origin(Some(other)),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
        assert!(!h.is_ui_origin(None));
        let v6 = Hosts {
            ui_host: "::1".into(),
            port: 1,
        };
        assert_eq!(v6.ui_origin(), "http://[::1]:1");
        assert_eq!(v6.classify(Some(b"[::1]:1")), HostKind::HostUi);
    }

    #[test]
    fn cookies_and_tokens_are_read_strictly() {
        let all = |h: &'static [u8]| cookies(h, "s").collect::<Vec<_>>();
        assert_eq!(all(b"a=1; s=xyz"), [&b"xyz"[..]]);
        assert_eq!(
            all(b"s=junk;s=2; s=3 "),
            [&b"junk"[..], b"2", b"3"],
            "every value of the name, in order"
        );
        assert!(all(b"ss=1; s; xs=2").is_empty());
        assert!(all(b"").is_empty());
        assert_eq!(query_param(Some("token=ab&x=1"), "token"), Some("ab"));
        assert_eq!(query_param(Some("xtoken=ab"), "token"), None);
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"ab"));
    }
}
