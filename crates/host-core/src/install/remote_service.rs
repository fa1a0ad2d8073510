//! The `server-assisted` declaration of a `cloud-remote` / `remote-http` service, checked from
//! the manifest alone (pure): the endpoint (`https://`; plain `http://` to a loopback host only
//! in debug builds, for tests), the auth the host adds (`none`, `bearer` or `header`, with the
//! value of a `secrets[]` slot the user sets in the host) and the data boundary text the review
//! sheet and the detail page show. Any flaw is `service.invalid_spec` with what to fix.
//!
//! ```yaml
//! runtimeTargets: [local, server-assisted]
//! secrets: [{key: api_token, required: true}]
//! services:
//!   - key: summarize
//!     kind: app-backend
//!     executionPlane: cloud-remote
//!     protocol: remote-http
//!     endpoint: https://api.example.com/rpc
//!     auth: {kind: bearer, secret: api_token}
//!     dataBoundary: The text you send is processed by example.com and not kept.
//! ```
//!
//! Whether host policy lets the app use it is not decided here: the user's per-app allowance
//! (`install/store/remote_grants.rs`), bound to the endpoint's origin, is a host fact readiness
//! and the service host read. `service_launch::plan` turns a flaw into `service.invalid_spec`.

use crate::install::manifest::Service;

/// Why a declaration is not valid (its code is always `service.invalid_spec`).
pub type Invalid = String;

/// Longest endpoint URL.
pub const MAX_ENDPOINT_BYTES: usize = 2048;
/// Longest data boundary text (characters).
pub const MAX_DATA_BOUNDARY_CHARS: usize = 2000;
/// Longest secret slot key and header name.
const MAX_NAME_BYTES: usize = 64;

/// What the host adds to each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteAuth {
    None,
    /// `Authorization: Bearer <value of secret slot>`.
    Bearer {
        secret: String,
    },
    /// `<header>: <value of secret slot>`.
    Header {
        header: String,
        secret: String,
    },
}

impl RemoteAuth {
    pub fn kind(&self) -> &'static str {
        match self {
            RemoteAuth::None => "none",
            RemoteAuth::Bearer { .. } => "bearer",
            RemoteAuth::Header { .. } => "header",
        }
    }

    /// The `secrets[]` slot whose value is sent, if any.
    pub fn secret(&self) -> Option<&str> {
        match self {
            RemoteAuth::None => None,
            RemoteAuth::Bearer { secret } | RemoteAuth::Header { secret, .. } => Some(secret),
        }
    }
}

/// A valid `server-assisted` declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSpec {
    /// The URL the host POSTs to, as parsed (normalized by the URL parser).
    pub endpoint: String,
    /// `scheme://host[:port]`: the only origin the host talks to for this service, and what
    /// the user's allowance is bound to.
    pub origin: String,
    pub auth: RemoteAuth,
    pub data_boundary: String,
}

/// A remote service as the review sheet shows it: where its calls go and what the remote side
/// receives and keeps.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteSummary {
    pub key: String,
    pub endpoint: String,
    pub origin: String,
    /// `none`, `bearer` or `header`.
    pub auth: String,
    /// The `secrets[]` slot whose value the host sends (the user sets it in the host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    pub data_boundary: String,
}

/// Every remote service of `view` with a valid declaration, in manifest order (readiness says
/// why the others cannot run).
pub fn summaries(view: crate::install::manifest::ManifestView<'_>) -> Vec<RemoteSummary> {
    view.services()
        .filter(|s| is_remote(*s))
        .filter_map(|s| {
            let spec = spec(s).ok()?;
            Some(RemoteSummary {
                key: s.key()?.to_owned(),
                endpoint: spec.endpoint,
                origin: spec.origin,
                auth: spec.auth.kind().to_owned(),
                secret: spec.auth.secret().map(str::to_owned),
                data_boundary: spec.data_boundary,
            })
        })
        .collect()
}

fn invalid(why: impl Into<String>) -> Invalid {
    why.into()
}

/// Whether `s` is a remote service (`executionPlane: cloud-remote` or `protocol: remote-http`).
pub fn is_remote(s: Service<'_>) -> bool {
    s.execution_plane() == Some("cloud-remote") || s.protocol() == Some("remote-http")
}

/// Checks the declaration of a remote service (the caller checked `server-assisted`).
pub fn spec(s: Service<'_>) -> Result<RemoteSpec, Invalid> {
    if s.execution_plane() != Some("cloud-remote") || s.protocol() != Some("remote-http") {
        return Err(invalid(
            "a remote service is executionPlane: cloud-remote with protocol: remote-http",
        ));
    }
    let Some(endpoint) = s.endpoint() else {
        return Err(invalid("a remote service needs an endpoint (https://...)"));
    };
    let url = endpoint_url(endpoint)?;
    let auth = auth(s)?;
    let data_boundary = data_boundary(s)?;
    Ok(RemoteSpec {
        origin: url.origin().ascii_serialization(),
        endpoint: url.to_string(),
        auth,
        data_boundary,
    })
}

/// Whether a plain `http://` endpoint to a loopback host is accepted: debug builds only (the
/// tests' local server); a release build talks https only.
pub fn loopback_http_allowed() -> bool {
    cfg!(debug_assertions)
}

fn is_loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The endpoint as a URL: `https://` (or debug-only loopback `http://`), a host, no
/// credentials or fragment, bounded.
pub fn endpoint_url(text: &str) -> Result<url::Url, Invalid> {
    if text.len() > MAX_ENDPOINT_BYTES {
        return Err(invalid(format!(
            "the endpoint is longer than {MAX_ENDPOINT_BYTES} bytes"
        )));
    }
    let u = url::Url::parse(text)
        .map_err(|e| invalid(format!("the endpoint {text:?} is not a URL ({e})")))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(invalid(
            "the endpoint carries credentials; declare auth instead",
        ));
    }
    if u.fragment().is_some() {
        return Err(invalid("the endpoint has a fragment"));
    }
    if u.host().is_none() {
        return Err(invalid("the endpoint names no host"));
    }
    match u.scheme() {
        "https" => Ok(u),
        "http" if is_loopback(&u) && loopback_http_allowed() => Ok(u),
        "http" => Err(invalid(format!(
            "the endpoint {text} is plain http: a remote service must use https"
        ))),
        other => Err(invalid(format!(
            "the endpoint scheme {other} is not supported: use https"
        ))),
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Headers the host sets itself or that change how the request is framed or routed.
fn reserved_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "host"
            | "content-length"
            | "content-type"
            | "content-encoding"
            | "transfer-encoding"
            | "connection"
            | "keep-alive"
            | "te"
            | "trailer"
            | "upgrade"
            | "accept"
            | "accept-encoding"
            | "cookie"
            | "user-agent"
            | "expect"
            | "forwarded"
    ) || n.starts_with("proxy-")
        || n.starts_with("x-forwarded-")
}

fn auth(s: Service<'_>) -> Result<RemoteAuth, Invalid> {
    let a = s.remote_auth();
    if !a.present {
        return Err(invalid(
            "a remote service declares auth (auth: {kind: none} when it needs none)",
        ));
    }
    if !a.is_object {
        return Err(invalid("auth is an object: {kind, secret, header}"));
    }
    let secret = || -> Result<String, Invalid> {
        match a.secret {
            Some(k) if valid_name(k) => Ok(k.to_owned()),
            Some(k) => Err(invalid(format!(
                "auth.secret {k:?} is not a secret slot key"
            ))),
            None => Err(invalid(
                "auth.secret names the secrets[] slot whose value the host sends",
            )),
        }
    };
    match a.kind {
        Some("none") if a.secret.is_none() && a.header.is_none() => Ok(RemoteAuth::None),
        Some("none") => Err(invalid("auth kind none names no secret or header")),
        Some("bearer") if a.header.is_some() => Err(invalid(
            "auth kind bearer sends Authorization; use kind header to name another header",
        )),
        Some("bearer") => Ok(RemoteAuth::Bearer { secret: secret()? }),
        Some("header") => {
            let header = match a.header {
                Some(h) if !valid_name(h) || h.contains('.') || h.contains('_') => {
                    return Err(invalid(format!("auth.header {h:?} is not a header name")))
                }
                Some(h) if reserved_header(h) => {
                    return Err(invalid(format!(
                        "auth.header {h} is set by the host and cannot carry a secret"
                    )))
                }
                Some(h) => h.to_owned(),
                None => return Err(invalid("auth kind header needs auth.header")),
            };
            Ok(RemoteAuth::Header {
                header,
                secret: secret()?,
            })
        }
        Some(other) => Err(invalid(format!(
            "auth kind {other:?} is not supported (none, bearer, header)"
        ))),
        None => Err(invalid("auth.kind is missing (none, bearer, header)")),
    }
}

fn data_boundary(s: Service<'_>) -> Result<String, Invalid> {
    let text = s.data_boundary().map(str::trim).unwrap_or_default();
    if text.is_empty() {
        return Err(invalid(
            "a remote service declares dataBoundary: what it receives and keeps, in words the user reads before allowing it",
        ));
    }
    if text.chars().count() > MAX_DATA_BOUNDARY_CHARS {
        return Err(invalid(format!(
            "dataBoundary is longer than {MAX_DATA_BOUNDARY_CHARS} characters"
        )));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(invalid("dataBoundary contains control characters"));
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(service_yaml: &str) -> Result<RemoteSpec, Invalid> {
        let text = format!(
            "---\nname: r\nversion: 1.0.0\ndescription: d\nservices:\n  - {service_yaml}\n---\n"
        );
        let mut captured = std::collections::BTreeMap::new();
        captured.insert("APP.md".to_string(), text.into_bytes());
        let m = crate::install::manifest::load(&captured, &Default::default()).unwrap();
        let v = m.view();
        let s = v.services().next().unwrap();
        spec(s)
    }

    const OK: &str = "{key: s, kind: app-backend, executionPlane: cloud-remote, protocol: remote-http, endpoint: \"https://api.example.com/rpc\", auth: {kind: bearer, secret: tok}, dataBoundary: \"Sends the text.\"}";

    #[test]
    fn a_full_declaration_parses() {
        let s = parsed(OK).unwrap();
        assert_eq!(s.origin, "https://api.example.com");
        assert_eq!(s.endpoint, "https://api.example.com/rpc");
        assert_eq!(
            s.auth,
            RemoteAuth::Bearer {
                secret: "tok".into()
            }
        );
        assert_eq!(s.data_boundary, "Sends the text.");
    }

    #[test]
    fn each_flaw_is_invalid_spec_with_its_reason() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "protocol: remote-http",
                "protocol: stdio-jsonrpc",
                "cloud-remote with protocol",
            ),
            (
                "endpoint: \"https://api.example.com/rpc\", ",
                "",
                "needs an endpoint",
            ),
            (
                "https://api.example.com/rpc",
                "http://api.example.com/rpc",
                "plain http",
            ),
            (
                "https://api.example.com/rpc",
                "ftp://api.example.com/rpc",
                "scheme ftp",
            ),
            (
                "https://api.example.com/rpc",
                "https://u:p@api.example.com/rpc",
                "credentials",
            ),
            (
                "https://api.example.com/rpc",
                "https://api.example.com/rpc#x",
                "fragment",
            ),
            ("https://api.example.com/rpc", "not a url", "not a URL"),
            ("auth: {kind: bearer, secret: tok}, ", "", "declares auth"),
            ("{kind: bearer, secret: tok}", "bearer", "is an object"),
            (
                "{kind: bearer, secret: tok}",
                "{kind: bearer}",
                "auth.secret names",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: bearer, secret: \"a/b\"}",
                "not a secret slot",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: oauth, secret: tok}",
                "not supported",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{secret: tok}",
                "auth.kind is missing",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: none, secret: tok}",
                "names no secret",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: header, secret: tok}",
                "needs auth.header",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: header, header: Host, secret: tok}",
                "set by the host",
            ),
            (
                "{kind: bearer, secret: tok}",
                "{kind: header, header: \"a b\", secret: tok}",
                "not a header name",
            ),
            (
                "dataBoundary: \"Sends the text.\"",
                "dataBoundary: \"  \"",
                "declares dataBoundary",
            ),
            (
                "dataBoundary: \"Sends the text.\"",
                "dataBoundary: 3",
                "declares dataBoundary",
            ),
        ];
        for (from, to, why) in cases {
            let yaml = OK.replace(from, to);
            assert_ne!(yaml, OK, "{from}");
            let e = parsed(&yaml).unwrap_err();
            assert!(e.contains(why), "{yaml}: {e}");
        }
        let long = OK.replace("Sends the text.", &"x".repeat(MAX_DATA_BOUNDARY_CHARS + 1));
        assert!(parsed(&long).unwrap_err().contains("longer"));
    }

    #[test]
    fn header_and_none_auth_parse() {
        let h = parsed(&OK.replace(
            "{kind: bearer, secret: tok}",
            "{kind: header, header: X-Api-Key, secret: tok}",
        ))
        .unwrap();
        assert_eq!(
            h.auth,
            RemoteAuth::Header {
                header: "X-Api-Key".into(),
                secret: "tok".into()
            }
        );
        let n = parsed(&OK.replace("{kind: bearer, secret: tok}", "{kind: none}")).unwrap();
        assert_eq!(n.auth, RemoteAuth::None);
        assert_eq!(n.auth.secret(), None);
    }

    #[test]
    fn loopback_http_only_in_debug_builds() {
        let r = parsed(&OK.replace("https://api.example.com/rpc", "http://127.0.0.1:9/rpc"));
        assert_eq!(r.is_ok(), cfg!(debug_assertions), "{r:?}");
        let r = parsed(&OK.replace("https://api.example.com/rpc", "http://10.0.0.1:9/rpc"));
        assert!(r.is_err());
    }
}
