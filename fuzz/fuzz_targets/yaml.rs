//! Any bytes to the YAML reader: a document or an error, within the caps, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(document) = jig_load::yaml::parse(text, &jig_load::yaml::Caps::DEFAULT) {
            // Every node the reader produced can be located again.
            let _ = document.position("");
        }
    }
});
