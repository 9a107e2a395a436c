//! Any bytes as a `*.tool.yaml`: the loader must answer with diagnostics, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let diagnostics = jig_load::check_tool_source("fuzz.tool.yaml", text);
        // Every diagnostic names its file.
        assert!(diagnostics.iter().all(|d| d.file.is_some()));
    }
});
