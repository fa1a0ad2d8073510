//! Host Bridge v1 (`lime.agentApp.bridge`, version 1): decoding what an app frame sends.
//!
//! The host UI checks `event.source` (only the browser knows which window sent a message) and
//! relays the raw message with the origin it observed and the mount id. Everything else is
//! re-checked here, in Rust, against the mount table's own record of the frame: size, JSON shape,
//! protocol, version, message type, `appId`, `entryKey`, origin, the `app:ready` handshake and the
//! payload schema of each type. A message that fails any check is refused with a stable reason
//! (`bridge.*`), counted and recorded for diagnostics; it never becomes a capability call.
//!
//! The envelope is closed: unknown top-level or payload fields are refused, so a v1 host never
//! silently ignores something a frame meant.

use serde::Serialize;
use serde_json::{Map, Value};

pub const PROTOCOL: &str = "lime.agentApp.bridge";
pub const VERSION: u64 = 1;
/// Largest message acted on, in bytes of its JSON text.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;
const MAX_ID_LEN: usize = 128;
const MAX_NAME_LEN: usize = 64;
const MAX_ROUTE_LEN: usize = 2048;
const MAX_URL_LEN: usize = 2048;
const MAX_TOAST_CHARS: usize = 500;

/// Who a mounted frame is, from the mount table (never from the message).
#[derive(Debug, Clone, Copy)]
pub struct FrameIdentity<'a> {
    pub app_id: &'a str,
    pub entry_key: &'a str,
    pub origin: &'a str,
}

pub use super::wire::ToastLevel;

/// A `capability:invoke` call: the decoder builds the choke point's transport-free [`Call`].
pub use crate::hosting::capability::Call;

/// What `host:download` offers: exactly one of an artifact of the app's own, or bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DownloadSource {
    Artifact(String),
    Text(String),
    Base64(String),
}

/// A message from an app frame that passed every check.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum AppMessage {
    #[serde(rename = "app:ready")]
    Ready { request_id: Option<String> },
    #[serde(rename = "host:getSnapshot")]
    GetSnapshot { request_id: Option<String> },
    #[serde(rename = "host:navigate")]
    Navigate {
        request_id: Option<String>,
        route: String,
    },
    #[serde(rename = "host:toast")]
    Toast {
        request_id: Option<String>,
        message: String,
        level: ToastLevel,
    },
    #[serde(rename = "host:openExternal")]
    OpenExternal {
        request_id: Option<String>,
        url: String,
    },
    #[serde(rename = "host:download")]
    Download {
        request_id: String,
        source: DownloadSource,
        file_name: Option<String>,
        mime_type: Option<String>,
    },
    #[serde(rename = "capability:invoke")]
    Invoke(Call),
    /// `capability:cancel {requestId}`: AppHost's documented extension.
    #[serde(rename = "capability:cancel")]
    Cancel {
        request_id: Option<String>,
        target: String,
    },
}

impl AppMessage {
    pub fn type_name(&self) -> &'static str {
        match self {
            AppMessage::Ready { .. } => "app:ready",
            AppMessage::GetSnapshot { .. } => "host:getSnapshot",
            AppMessage::Navigate { .. } => "host:navigate",
            AppMessage::Toast { .. } => "host:toast",
            AppMessage::OpenExternal { .. } => "host:openExternal",
            AppMessage::Download { .. } => "host:download",
            AppMessage::Invoke(_) => "capability:invoke",
            AppMessage::Cancel { .. } => "capability:cancel",
        }
    }

    pub fn request_id(&self) -> Option<&str> {
        match self {
            AppMessage::Ready { request_id }
            | AppMessage::GetSnapshot { request_id }
            | AppMessage::Navigate { request_id, .. }
            | AppMessage::Toast { request_id, .. }
            | AppMessage::OpenExternal { request_id, .. }
            | AppMessage::Cancel { request_id, .. } => request_id.as_deref(),
            AppMessage::Download { request_id, .. } => Some(request_id),
            AppMessage::Invoke(i) => Some(&i.request_id),
        }
    }
}

macro_rules! refusals {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// Why a message was not acted on. The strings are stable (diagnostics, docs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Refusal { $( $(#[$doc])* $variant, )* }
        impl Refusal {
            pub const ALL: &'static [Refusal] = &[$(Refusal::$variant,)*];
            pub fn as_str(self) -> &'static str {
                match self { $(Refusal::$variant => $text,)* }
            }
        }
    };
}

refusals! {
    /// Larger than [`MAX_MESSAGE_BYTES`].
    TooLarge = "bridge.too_large",
    /// Not JSON text (or nested too deeply to parse).
    NotJson = "bridge.not_json",
    /// JSON, but not an object.
    NotAnObject = "bridge.not_an_object",
    /// `protocol` is not `lime.agentApp.bridge`.
    WrongProtocol = "bridge.wrong_protocol",
    /// `version` is not the number 1.
    WrongVersion = "bridge.wrong_version",
    /// `type` is missing or not a message an app may send.
    UnknownType = "bridge.unknown_type",
    /// A field the v1 envelope or the type's payload does not define.
    UnknownField = "bridge.unknown_field",
    /// A request that needs `requestId` has none.
    MissingRequestId = "bridge.missing_request_id",
    /// `requestId` is not 1..=128 characters of `[A-Za-z0-9._:-]`.
    InvalidRequestId = "bridge.invalid_request_id",
    /// `appId` is not the mounted app's.
    AppMismatch = "bridge.app_mismatch",
    /// `entryKey` is missing or not the mounted entry's.
    EntryMismatch = "bridge.entry_mismatch",
    /// The observed `event.origin` is not the mounted app's origin.
    WrongOrigin = "bridge.wrong_origin",
    /// `event.source` was not the mounted frame's window (checked by the host UI).
    WrongSource = "bridge.wrong_source",
    /// The frame has not sent `app:ready` yet.
    NotReady = "bridge.not_ready",
    /// The payload does not match the type's schema.
    InvalidPayload = "bridge.invalid_payload",
    /// The message names a mount that does not exist (unmounted, or never mounted).
    UnknownMount = "bridge.unknown_mount",
}

impl Refusal {
    pub fn parse(s: &str) -> Option<Refusal> {
        Refusal::ALL.iter().copied().find(|r| r.as_str() == s)
    }
}

const ENVELOPE_FIELDS: &[&str] = &[
    "protocol",
    "version",
    "type",
    "requestId",
    "appId",
    "entryKey",
    "payload",
];

/// Decodes and checks one message from a mounted frame.
///
/// `observed_origin` is `event.origin` as the host UI saw it; `ready` says whether this frame
/// has completed the `app:ready` handshake.
pub fn decode(
    raw: &str,
    frame: FrameIdentity<'_>,
    observed_origin: &str,
    ready: bool,
) -> Result<AppMessage, Refusal> {
    if raw.len() > MAX_MESSAGE_BYTES {
        return Err(Refusal::TooLarge);
    }
    if observed_origin != frame.origin {
        return Err(Refusal::WrongOrigin);
    }
    let value: Value = serde_json::from_str(raw).map_err(|_| Refusal::NotJson)?;
    let Value::Object(mut env) = value else {
        return Err(Refusal::NotAnObject);
    };
    if env.get("protocol").and_then(Value::as_str) != Some(PROTOCOL) {
        return Err(Refusal::WrongProtocol);
    }
    if env.get("version").and_then(Value::as_u64) != Some(VERSION) {
        return Err(Refusal::WrongVersion);
    }
    if env.keys().any(|k| !ENVELOPE_FIELDS.contains(&k.as_str())) {
        return Err(Refusal::UnknownField);
    }
    if env.get("appId").and_then(Value::as_str) != Some(frame.app_id) {
        return Err(Refusal::AppMismatch);
    }
    if env.get("entryKey").and_then(Value::as_str) != Some(frame.entry_key) {
        return Err(Refusal::EntryMismatch);
    }
    let kind = env
        .get("type")
        .and_then(Value::as_str)
        .ok_or(Refusal::UnknownType)?
        .to_owned();
    let request_id = match env.get("requestId") {
        None => None,
        Some(Value::String(s)) if is_valid_id(s) => Some(s.clone()),
        Some(_) => return Err(Refusal::InvalidRequestId),
    };
    let payload = match env.remove("payload") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(Refusal::InvalidPayload),
    };
    if kind != "app:ready" && !ready && is_app_type(&kind) {
        return Err(Refusal::NotReady);
    }
    let p = Payload(payload);
    let msg = match kind.as_str() {
        "app:ready" => {
            p.only(&[])?;
            AppMessage::Ready { request_id }
        }
        "host:getSnapshot" => {
            p.only(&[])?;
            AppMessage::GetSnapshot { request_id }
        }
        "host:navigate" => {
            p.only(&["route"])?;
            let route = p.string("route", MAX_ROUTE_LEN)?;
            if !route.starts_with('/') || route.starts_with("//") || has_control(&route) {
                return Err(Refusal::InvalidPayload);
            }
            AppMessage::Navigate { request_id, route }
        }
        "host:toast" => {
            p.only(&["message", "level"])?;
            let message = p.string("message", MAX_TOAST_CHARS * 4)?;
            if message.chars().count() > MAX_TOAST_CHARS || message.trim().is_empty() {
                return Err(Refusal::InvalidPayload);
            }
            let level = match p.0.get("level") {
                None => ToastLevel::Info,
                Some(Value::String(s)) => match s.as_str() {
                    "info" => ToastLevel::Info,
                    "success" => ToastLevel::Success,
                    "warning" => ToastLevel::Warning,
                    "error" => ToastLevel::Error,
                    _ => return Err(Refusal::InvalidPayload),
                },
                Some(_) => return Err(Refusal::InvalidPayload),
            };
            AppMessage::Toast {
                request_id,
                message,
                level,
            }
        }
        "host:openExternal" => {
            p.only(&["url"])?;
            let url = p.string("url", MAX_URL_LEN)?;
            AppMessage::OpenExternal { request_id, url }
        }
        "host:download" => {
            p.only(&["artifactId", "text", "base64", "fileName", "mimeType"])?;
            let request_id = request_id.ok_or(Refusal::MissingRequestId)?;
            let present = |k: &str| p.0.contains_key(k);
            let source = match (present("artifactId"), present("text"), present("base64")) {
                (true, false, false) => {
                    DownloadSource::Artifact(p.string("artifactId", MAX_ID_LEN)?)
                }
                // The message itself is at most 1 MiB, which bounds both.
                (false, true, false) => DownloadSource::Text(p.string("text", MAX_MESSAGE_BYTES)?),
                (false, false, true) => {
                    DownloadSource::Base64(p.string("base64", MAX_MESSAGE_BYTES)?)
                }
                _ => return Err(Refusal::InvalidPayload),
            };
            let optional = |k: &str, max: usize| match p.0.get(k) {
                None => Ok(None),
                Some(_) => p.string(k, max).map(Some),
            };
            AppMessage::Download {
                request_id,
                source,
                file_name: optional("fileName", 255)?,
                mime_type: optional("mimeType", 127)?,
            }
        }
        "capability:invoke" => {
            p.only(&["capability", "method", "args", "options"])?;
            let request_id = request_id.ok_or(Refusal::MissingRequestId)?;
            let capability = p.string("capability", MAX_NAME_LEN)?;
            let method = p.string("method", MAX_NAME_LEN)?;
            if !is_capability_name(&capability) || !is_method_name(&method) {
                return Err(Refusal::InvalidPayload);
            }
            let args = match p.0.get("args") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(v) => v.clone(),
            };
            let options = match p.0.get("options") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(o)) => o.clone(),
                Some(_) => return Err(Refusal::InvalidPayload),
            };
            AppMessage::Invoke(Call {
                request_id,
                capability,
                method,
                args,
                options,
            })
        }
        "capability:cancel" => {
            p.only(&["requestId"])?;
            let target = p.string("requestId", MAX_ID_LEN)?;
            if !is_valid_id(&target) {
                return Err(Refusal::InvalidPayload);
            }
            AppMessage::Cancel { request_id, target }
        }
        _ => return Err(Refusal::UnknownType),
    };
    Ok(msg)
}

fn is_app_type(t: &str) -> bool {
    matches!(
        t,
        "host:getSnapshot"
            | "host:navigate"
            | "host:toast"
            | "host:openExternal"
            | "host:download"
            | "capability:invoke"
            | "capability:cancel"
    )
}

struct Payload(Map<String, Value>);

impl Payload {
    fn only(&self, allowed: &[&str]) -> Result<(), Refusal> {
        if self.0.keys().all(|k| allowed.contains(&k.as_str())) {
            Ok(())
        } else {
            Err(Refusal::UnknownField)
        }
    }
    fn string(&self, key: &str, max_bytes: usize) -> Result<String, Refusal> {
        match self.0.get(key) {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= max_bytes => Ok(s.clone()),
            _ => Err(Refusal::InvalidPayload),
        }
    }
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// Request ids: 1..=128 characters of `[A-Za-z0-9._:-]`.
pub fn is_valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// `lime.<name>(.<name>)*`, ASCII letters and digits.
pub fn is_capability_name(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("lime.") else {
        return false;
    };
    !rest.is_empty()
        && rest.split('.').all(|part| {
            part.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                && part.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// A method name: a letter, then letters, digits or `_`.
pub fn is_method_name(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests;
