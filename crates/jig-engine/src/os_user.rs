//! Who is at the keyboard: the principal of the CLI, the desktop app and a plain `jig serve`.

/// The name of the user this process runs as (from the owner of `/proc/self` and
/// `/etc/passwd`), never an environment variable anyone can set.
pub fn os_user() -> String {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(uid) = fs_err::metadata("/proc/self").map(|m| m.uid()) else {
        return "unknown".to_owned();
    };
    let passwd = fs_err::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let id = fields.nth(1)?.parse::<u32>().ok()?;
            (id == uid).then(|| name.to_owned())
        })
        .next()
        .unwrap_or_else(|| format!("uid-{uid}"))
}
