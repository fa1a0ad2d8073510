//! The `server-assisted` declaration of a `cloud-remote` / `remote-http` service, as written:
//! `auth: {kind: none | bearer | header, secret: <secrets[] key>, header: <name>}` and
//! `dataBoundary` (host extensions next to the standard's `endpoint`: the standard asks for
//! "endpoint, auth mode, ... data egress" without naming fields). Checked by
//! `install/remote_service.rs`.

use serde_json::Value;

use super::{text, Service};

/// `auth` of a remote service as written; each field `None` when absent or not a string.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteAuthDecl<'a> {
    /// `auth` is present.
    pub present: bool,
    /// `auth` is an object (anything else is refused).
    pub is_object: bool,
    pub kind: Option<&'a str>,
    /// The `secrets[]` slot whose value the host sends.
    pub secret: Option<&'a str>,
    /// The header a `kind: header` secret goes in.
    pub header: Option<&'a str>,
}

impl<'a> Service<'a> {
    /// `auth` of a `remote-http` service.
    pub fn remote_auth(self) -> RemoteAuthDecl<'a> {
        match self.0.get("auth") {
            None => RemoteAuthDecl::default(),
            Some(v @ Value::Object(_)) => RemoteAuthDecl {
                present: true,
                is_object: true,
                kind: text(v, "kind"),
                secret: text(v, "secret"),
                header: text(v, "header"),
            },
            Some(_) => RemoteAuthDecl {
                present: true,
                ..RemoteAuthDecl::default()
            },
        }
    }

    /// `dataBoundary`: what the remote service receives and keeps, in the author's words
    /// (shown on the review sheet and the detail page). `None` when absent or not a string.
    pub fn data_boundary(self) -> Option<&'a str> {
        text(self.0, "dataBoundary")
    }
}
