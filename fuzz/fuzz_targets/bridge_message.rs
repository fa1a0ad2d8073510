//! `host_core::hosting::bridge::message::decode` on arbitrary bytes, as a frame could send them, with and
//! without the `app:ready` handshake. Nothing may panic; an accepted message must name the
//! mounted app and entry (the decoder never accepts another identity), and its payload must parse
//! as the generated wire type (`bridge/wire.rs`, the source of the schemas and the SDK's types).
#![no_main]

use host_core::hosting::bridge::message::{decode, FrameIdentity, PROTOCOL};
use host_core::hosting::bridge::wire::app_payload_parses;
use libfuzzer_sys::fuzz_target;

const FRAME: FrameIdentity<'static> = FrameIdentity {
    app_id: "hello-app",
    entry_key: "notes",
    origin: "agentapp://hello-app",
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for ready in [false, true] {
        if let Ok(msg) = decode(text, FRAME, FRAME.origin, ready) {
            let v: serde_json::Value = serde_json::from_str(text).expect("accepted means JSON");
            assert_eq!(v["protocol"], PROTOCOL);
            assert_eq!(v["appId"], "hello-app");
            assert_eq!(v["entryKey"], "notes");
            assert!(ready || msg.type_name() == "app:ready");
            assert!(app_payload_parses(msg.type_name(), v.get("payload")));
        }
        assert!(decode(text, FRAME, "agentapp://other", ready).is_err());
    }
});
