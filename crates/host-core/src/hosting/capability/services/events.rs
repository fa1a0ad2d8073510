//! `lime.events`: publish/subscribe between the mounted entries of one app. This module checks
//! the arguments, and that the manifest's `events[]` declares the topic for that direction
//! (`{key, direction: publish | subscribe | both}`), and says what to do ([`Effect`]); the bridge keeps the subscriptions (in the
//! mount table, so they die with the frame) and delivers `host:event`s, only to frames of the
//! calling app.

use serde_json::Value;

use super::{err, Effect, Reply};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::EventsMethod;

/// Longest topic, in bytes (`A-Z a-z 0-9 . _ - : /`).
pub const MAX_TOPIC_BYTES: usize = 128;
/// Largest event payload, as compact JSON.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

pub(super) fn call(a: &Allowed, method: EventsMethod, args: &Value) -> Result<Reply, CallError> {
    let topic = topic(a, args)?;
    let wanted = match method {
        EventsMethod::Publish => Some("publish"),
        EventsMethod::Subscribe => Some("subscribe"),
        // Dropping a subscription is always allowed (it only ever has a declared topic).
        EventsMethod::Unsubscribe => None,
    };
    if let Some(direction) = wanted {
        if !declares(a, &topic, direction) {
            return Err(err(
                a,
                ErrorCode::PermissionDenied,
                &format!(
                    "the app's manifest declares no event {topic:?} to {direction} (events[])"
                ),
                Some("events.undeclared_topic"),
            ));
        }
    }
    let effect = match method {
        EventsMethod::Subscribe => Effect::Subscribe { topic },
        EventsMethod::Unsubscribe => Effect::Unsubscribe { topic },
        EventsMethod::Publish => {
            let payload = args.get("payload").cloned().unwrap_or(Value::Null);
            let size = serde_json::to_vec(&payload).map_or(usize::MAX, |v| v.len());
            if size > MAX_PAYLOAD_BYTES {
                return Err(err(
                    a,
                    ErrorCode::InvalidArgument,
                    &format!("an event payload may be at most {MAX_PAYLOAD_BYTES} bytes of JSON"),
                    Some("events.payload_too_large"),
                ));
            }
            Effect::Publish { topic, payload }
        }
    };
    Ok(Reply {
        value: Value::Null,
        effect: Some(effect),
    })
}

/// Whether the manifest's `events[]` has `{key: topic, direction: direction | both}`.
fn declares(a: &Allowed, topic: &str, direction: &str) -> bool {
    a.manifest().view().events().any(|e| {
        e.key() == Some(topic) && matches!(e.direction(), Some(d) if d == direction || d == "both")
    })
}

fn topic(a: &Allowed, args: &Value) -> Result<String, CallError> {
    args.get("topic")
        .and_then(Value::as_str)
        .filter(|t| {
            !t.is_empty()
                && t.len() <= MAX_TOPIC_BYTES
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-:/".contains(&b))
        })
        .map(str::to_owned)
        .ok_or_else(|| {
            err(
                a,
                ErrorCode::InvalidArgument,
                &format!("args.topic must be 1-{MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /"),
                Some("events.invalid_topic"),
            )
        })
}
