//! `lime.events`: publish/subscribe between one app's frames.

use super::*;

fn topic() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9._:/-]+$"})
}

pub fn contract() -> NamespaceContract {
    NamespaceContract {
        capability: "lime.events",
        rows: vec![
            row(
                "publish",
                "Deliver to the app's other subscribed frames.",
                closed(&[("topic", topic()), ("payload", any())], &["topic"]),
                closed(&[("delivered", integer(0, None))], &["delivered"]),
            ),
            row(
                "subscribe",
                "Receive a declared topic as `host:event`s.",
                closed(&[("topic", topic())], &["topic"]),
                closed(
                    &[("subscribed", json!({"const": true})), ("topic", string())],
                    &["subscribed", "topic"],
                ),
            ),
            row(
                "unsubscribe",
                "Stop receiving a topic.",
                closed(&[("topic", topic())], &["topic"]),
                closed(
                    &[("unsubscribed", boolean()), ("topic", string())],
                    &["unsubscribed", "topic"],
                ),
            ),
        ],
    }
}
