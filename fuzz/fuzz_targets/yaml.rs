//! `host_core::foundation::yaml::parse` on arbitrary text, with the default limits: it must return a value
//! or a `YamlError`, never panic, overflow the stack or run away with memory.
#![no_main]

use host_core::foundation::yaml::{parse, YamlLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Lossy, so that inputs with a stray invalid byte still reach the parser.
    let text = String::from_utf8_lossy(data);
    let _ = parse(&text, YamlLimits::default());
});
