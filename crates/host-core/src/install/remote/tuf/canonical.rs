//! Canonical JSON: what a signature covers. Object keys sorted by their UTF-8 bytes, no
//! whitespace, strings and numbers as serde_json writes them. The signer (`super::sign`) and
//! the verifier (`super::verify`) both use this one function, so the bytes always agree.

use serde_json::Value;

/// The canonical bytes of `v`.
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                if let Some(item) = map.get(k.as_str()) {
                    write(item, out);
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::String(s) => write_string(s, out),
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    // serde_json's string escaping is deterministic; a str always serializes.
    out.extend_from_slice(Value::String(s.to_owned()).to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level_and_whitespace_is_dropped() {
        let v: Value = serde_json::from_str(
            r#"{ "b": 1, "a": {"z": [1, {"y": 2, "x": "\u00e9"}], "c": null } }"#,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(canonical_bytes(&v)).unwrap(),
            r#"{"a":{"c":null,"z":[1,{"x":"é","y":2}]},"b":1}"#
        );
    }
}
