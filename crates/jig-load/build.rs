//! Embeds the `std` package (toolpacks/std) into the library, so every project has the built-in
//! catalog without requiring anything.

// A build script fails by panicking; its messages name the paths.
#![allow(clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let std_dir = manifest_dir.join("../../toolpacks/std");
    println!("cargo:rerun-if-changed={}", std_dir.display());
    let mut files = Vec::new();
    collect(&std_dir, &std_dir, &mut files);
    files.sort();
    let mut out =
        String::from("/// The files of the std package: (path relative to its root, contents).\n");
    out.push_str("pub(crate) static STD_FILES: &[(&str, &str)] = &[\n");
    for rel in &files {
        let abs = std_dir.join(rel);
        println!("cargo:rerun-if-changed={}", abs.display());
        writeln!(out, "    ({rel:?}, include_str!({:?})),", abs.display().to_string())
            .expect("string");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("std_files.rs");
    std::fs::write(dest, out).expect("write std_files.rs");
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.ends_with(".yaml") || rel.ends_with(".json") {
                out.push(rel);
            }
        }
    }
}
