//! The shell tokenizer of `shell_exec`: any command line either is refused or splits into words
//! that (1) survive rendering and splitting again unchanged, and (2) cannot pose as other
//! words to an allow-list: a rendering matched by `^git(\s|$)` means the program is `git`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let Ok(words) = jig_policy::command::tokenize(line) else { return };
    let rendered = jig_policy::command::render(&words);
    let again = jig_policy::command::tokenize(&rendered)
        .unwrap_or_else(|d| panic!("{rendered:?} (from {line:?}) is refused: {}", d.reason));
    assert_eq!(again, words, "{line:?} rendered as {rendered:?}");
    let git = regex::Regex::new(r"^git(\s|$)").expect("regex");
    if git.is_match(&rendered) {
        assert_eq!(words[0], "git", "{line:?} poses as git: {rendered:?}");
    }
});
