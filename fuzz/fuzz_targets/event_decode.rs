//! `runtime_core::event::decode_event` on arbitrary text: it must return an event or an error,
//! never panic; a decoded event must re-encode to JSON that decodes to the same event.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runtime_core::event::decode_event;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(event) = decode_event(&text) {
        let again = decode_event(&event.to_json_string()).expect("re-encoded events decode");
        assert_eq!(again, event);
    }
});
