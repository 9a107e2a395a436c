//! Where the app keeps its own files, by the XDG conventions (the same places `scripts/run`
//! uses, so the browser and the desktop open the same example copy).

use std::path::PathBuf;

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

fn xdg(variable: &str, fallback: &str) -> PathBuf {
    std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home().join(fallback))
}

/// `$XDG_DATA_HOME/jig` (`~/.local/share/jig`): the example project's copy.
pub fn data_dir() -> PathBuf {
    xdg("XDG_DATA_HOME", ".local/share").join("jig")
}

/// `$XDG_CONFIG_HOME/jig` (`~/.config/jig`): the recent projects.
pub fn config_dir() -> PathBuf {
    xdg("XDG_CONFIG_HOME", ".config").join("jig")
}
