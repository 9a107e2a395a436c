//! Rebuild when the UI is rebuilt: its files are embedded (`pages.rs`), and a new build has new
//! hashed file names that no `include_bytes!` of the previous build tracks.

fn main() {
    println!("cargo:rerun-if-changed=../../ui/dist");
}
