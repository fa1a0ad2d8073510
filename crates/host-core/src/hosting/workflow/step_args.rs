//! A step's arguments in the shape its capability method takes. The run machine names an
//! `artifact-create` step's artifact by kind, title and content; `lime.artifacts.create` takes
//! `{name, mimeType, text}`: the title (or the kind) is the name, string content is plain text,
//! anything else is saved as JSON. A `tool-call` naming a tool (`uses: <server>/<tool>`) is
//! `lime.tools.invoke` with `{key, input}` from the machine; the method takes `{tool,
//! arguments}`. Other steps pass through as the machine made them.

use serde_json::{json, Value};

pub fn adapt(capability: &str, method: &str, args: &Value) -> Value {
    if (capability, method) == ("lime.tools", "invoke") && args.get("tool").is_none() {
        if let Some(key) = args.get("key").filter(|k| k.is_string()) {
            let input = args.get("input").cloned().unwrap_or_else(|| json!({}));
            return json!({"tool": key, "arguments": input});
        }
    }
    if (capability, method) != ("lime.artifacts", "create") || args.get("content").is_none() {
        return args.clone();
    }
    let kind = args["kind"].as_str().unwrap_or("artifact");
    let name = args["title"].as_str().unwrap_or(kind);
    match &args["content"] {
        Value::String(s) => json!({"name": name, "mimeType": "text/plain", "text": s}),
        other => json!({"name": name, "mimeType": "application/json", "text": other.to_string()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_artifact_step_becomes_a_create_call_and_others_pass_through() {
        let a = json!({"kind": "reply", "title": "Reply: cats", "content": {"text": "hi"}});
        assert_eq!(
            adapt("lime.artifacts", "create", &a),
            json!({"name": "Reply: cats", "mimeType": "application/json", "text": "{\"text\":\"hi\"}"})
        );
        let s = json!({"kind": "reply", "title": 7, "content": "hi"});
        assert_eq!(
            adapt("lime.artifacts", "create", &s),
            json!({"name": "reply", "mimeType": "text/plain", "text": "hi"})
        );
        let tool = json!({"key": "t/echo", "input": {"text": "hi"}});
        assert_eq!(
            adapt("lime.tools", "invoke", &tool),
            json!({"tool": "t/echo", "arguments": {"text": "hi"}})
        );
        let given = json!({"tool": "t/echo", "arguments": {}});
        assert_eq!(adapt("lime.tools", "invoke", &given), given);
        let set = json!({"key": "k", "value": 1});
        assert_eq!(adapt("lime.storage", "set", &set), set);
    }
}
