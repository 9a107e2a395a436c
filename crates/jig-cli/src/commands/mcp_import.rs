//! `jig mcp import FILE`: the MCP servers of a client's configuration (Claude Desktop's and
//! Cursor's `mcpServers`, VS Code's `servers`) written into the manifest's `mcp_servers:`,
//! then asked for their tools. The manifest is changed only if the project still loads with
//! the new section: otherwise it is left exactly as it was.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use jig_model::mcp_server::{McpServer, server_name};
use serde_json::{Map, Value};

use crate::exit::Code;
use crate::output::Settings;

/// Largest configuration file read.
const MOST_BYTES: u64 = 1024 * 1024;

/// Words in a variable's name that say its value is a secret: kept out of the manifest.
const SECRET_WORDS: [&str; 8] =
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE"];

/// One server as imported, and what was changed on the way.
struct Imported {
    name: String,
    server: McpServer,
    notes: Vec<String>,
}

pub async fn run(
    settings: &Settings,
    file: &Path,
    replace: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let imported = match read_config(file) {
        Ok(imported) => imported,
        Err(message) => {
            crate::fail!(ValidationFail, "{}: {message}", file.display());
            return Ok(Code::Usage);
        }
    };
    let Some(manifest) = jig_load::find_manifest(&settings.project) else {
        crate::fail!(
            FileIo,
            "no jig.yaml in {} or above it: `jig mcp import` writes into a project's manifest",
            settings.project.display()
        );
        return Ok(Code::Usage);
    };
    let original = fs_err::read_to_string(&manifest)?;
    let mut servers = match existing(&original) {
        Ok(servers) => servers,
        Err(message) => {
            crate::fail!(ValidationFail, "{}: {message}", manifest.display());
            return Ok(Code::Usage);
        }
    };
    for entry in &imported {
        if servers.contains_key(&entry.name) && !replace {
            crate::fail!(
                Conflict,
                "{}: `mcp_servers` already has `{}`; nothing was written (--replace takes the imported one)",
                manifest.display(),
                entry.name
            );
            return Ok(Code::Usage);
        }
    }
    for entry in &imported {
        servers.insert(entry.name.clone(), entry.server.clone());
    }
    let written = with_section(&original, &section(&servers)?);
    crate::files::write_whole(&manifest, &written)?;
    // The project must still load; otherwise the manifest goes back to what it was.
    if let Err(failure) = jig_load::load(&settings.project) {
        crate::files::write_whole(&manifest, &original)?;
        for diagnostic in failure.errors() {
            crate::fail!(ValidationFail, "{}", diagnostic.message);
        }
        eprintln!("nothing was written: the project would not load with these servers");
        return Ok(Code::Invalid);
    }
    for entry in &imported {
        writeln!(out, "{}", entry.name)?;
        for note in &entry.notes {
            eprintln!("note: {}: {note}", entry.name);
        }
    }
    eprintln!(
        "wrote {} server{} into {}; asking {} for {} tools…",
        imported.len(),
        if imported.len() == 1 { "" } else { "s" },
        manifest.display(),
        if imported.len() == 1 { "it" } else { "them" },
        if imported.len() == 1 { "its" } else { "their" },
    );
    if super::mcp_discover::run(settings).await? != Code::Ok {
        eprintln!(
            "the servers are in the manifest; one that could not be asked may need `grants` (its `paths`, the `programs` it is installed in: docs/mcp.md), then `jig mcp discover`"
        );
    }
    Ok(Code::Ok)
}

/// The servers of a client's configuration file.
fn read_config(file: &Path) -> Result<Vec<Imported>, String> {
    let size = fs_err::metadata(file).map_err(|e| e.to_string())?.len();
    if size > MOST_BYTES {
        return Err(format!("{size} bytes; a client configuration is at most 1 MiB"));
    }
    let text = fs_err::read_to_string(file).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let servers = value
        .get("mcpServers")
        .or_else(|| value.get("servers"))
        .or_else(|| value.pointer("/mcp/servers"))
        .and_then(Value::as_object)
        .ok_or("no `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code) object")?;
    if servers.is_empty() {
        return Err("its server list is empty".to_owned());
    }
    let mut out: Vec<Imported> = Vec::new();
    for (given, entry) in servers {
        let entry = entry.as_object().ok_or(format!("`{given}` is not an object"))?;
        if entry.get("disabled") == Some(&Value::Bool(true)) {
            continue;
        }
        let name = jig_name(given);
        if out.iter().any(|o| o.name == name) {
            return Err(format!("`{given}` and another server both become `{name}`"));
        }
        let mut imported = server_of(given, entry)?;
        if name != *given {
            imported
                .notes
                .insert(0, format!("named `{name}` (from `{given}`): a tool's id starts with it"));
        }
        imported.name = name;
        out.push(imported);
    }
    if out.is_empty() {
        return Err("every server in it is disabled".to_owned());
    }
    Ok(out)
}

fn server_of(given: &str, entry: &Map<String, Value>) -> Result<Imported, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{given}.{key}` is not a string")),
        }
    };
    let strings = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(format!("`{given}.{key}.{k}` is not a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{given}.{key}` is not an object")),
        }
    };
    let args = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or(format!("`{given}.args` holds a non-string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("`{given}.args` is not a list")),
    };
    // A secret is judged by its name and by its value, with the scanner redaction uses: a
    // `DATABASE_URL` with a password, a `ghp_` token under `GH_PAT`, a bearer credential in an
    // argument. Where the manifest has no way to pass a value from Jig's environment (a
    // command's arguments, a server's URL), the import stops instead of writing it.
    for (i, arg) in args.iter().enumerate() {
        if looks_secret(arg) {
            return Err(format!(
                "`{given}.args[{i}]` holds what looks like a secret; Jig does not write secrets into the manifest: \
                 give it to the server through `env` (exported where Jig runs) or, for a remote server, a header"
            ));
        }
    }
    if let Some(url) = text("url")?
        && looks_secret(&url)
    {
        return Err(format!(
            "`{given}.url` holds what looks like a secret (a key in its query or a password); Jig does not write \
             secrets into the manifest: send it as a header (`headers: {{X-API-Key: \"${{VAR}}\"}}`) instead"
        ));
    }
    let mut notes = Vec::new();
    let mut env = BTreeMap::new();
    let mut env_from = Vec::new();
    for (key, value) in strings("env")? {
        if SECRET_WORDS.iter().any(|w| key.to_ascii_uppercase().contains(w)) || looks_secret(&value)
        {
            notes.push(format!("`{key}` looks like a secret: it is not written into the manifest; export it where Jig runs (it is passed to the server from there)"));
            env_from.push(key);
        } else {
            env.insert(key, value);
        }
    }
    let mut headers = BTreeMap::new();
    for (header, value) in strings("headers")? {
        let (written, passed) = header_value(given, &header, &value);
        if written != value && passed.len() == 1 && !value.contains("${") {
            notes.push(format!("header `{header}` looks like a secret: it is written as `{written}`; export {} where Jig runs, with the value the client had", passed[0]));
        }
        for name in passed {
            if !env_from.contains(&name) {
                env_from.push(name);
            }
        }
        headers.insert(header, written);
    }
    for key in entry.keys() {
        if !["command", "args", "env", "url", "headers", "type", "disabled"].contains(&key.as_str())
        {
            notes.push(format!("`{key}` is not something Jig reads; left out"));
        }
    }
    let server = McpServer {
        command: text("command")?,
        args,
        env,
        env_from,
        url: text("url")?,
        headers,
        ..McpServer::default()
    };
    if let Some((field, message)) = server.problems().into_iter().next() {
        return Err(format!("`{given}.{field}`: {message}"));
    }
    if server.url.is_some() {
        notes.push("a server over HTTP is reached only where the policy's network allow-list lets Jig (`policy.network.allowed_domains`)".to_owned());
    }
    Ok(Imported { name: given.to_owned(), server, notes })
}

/// A header as the manifest keeps it, and the variables it takes from Jig's environment: a
/// client's `${VAR}` or `${env:VAR}` (Cursor's, VS Code's) becomes Jig's `${VAR}`; a
/// secret-looking header with a literal value (`Authorization: Bearer …`) becomes
/// `${SERVER_HEADER}`, so the token never lands in the manifest.
fn header_value(server: &str, header: &str, value: &str) -> (String, Vec<String>) {
    let mut passed = Vec::new();
    let mut written = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}').map(|e| start + e) else { break };
        let variable = rest[start + 2..end].trim_start_matches("env:").to_owned();
        written.push_str(&rest[..start]);
        written.push_str(&format!("${{{variable}}}"));
        passed.push(variable);
        rest = &rest[end + 1..];
    }
    written.push_str(rest);
    let secret =
        SECRET_WORDS.iter().any(|w| header.to_ascii_uppercase().contains(w)) || looks_secret(value);
    if secret && passed.is_empty() {
        let variable: String = format!("{server}_{header}")
            .to_ascii_uppercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        return (format!("${{{variable}}}"), vec![variable]);
    }
    (written, passed)
}

/// Whether `value` holds what redaction would mask: a known token format, a bearer
/// credential, a `key=`/`password=` assignment, a password in a URL.
fn looks_secret(value: &str) -> bool {
    jig_policy::redact::redact_text(value) != value
}

/// A client's server name as a Jig server name: lowercase, `-` for what is not allowed.
fn jig_name(given: &str) -> String {
    let mut name: String = given
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "mcp-");
    }
    name.truncate(40);
    debug_assert!(server_name(&name) || name.is_empty());
    name
}

/// The servers the manifest names already.
fn existing(manifest: &str) -> Result<BTreeMap<String, McpServer>, String> {
    let document =
        jig_load::yaml::parse(manifest, &jig_load::yaml::Caps::DEFAULT).map_err(|e| e.message)?;
    match document.value.get("mcp_servers") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(servers) => serde_json::from_value(servers.clone())
            .map_err(|e| format!("its `mcp_servers` cannot be read: {e}")),
    }
}

/// `mcp_servers:` as YAML: each value written as JSON, which YAML reads as it is.
fn section(servers: &BTreeMap<String, McpServer>) -> anyhow::Result<String> {
    let mut text = String::from("mcp_servers:\n");
    for (name, server) in servers {
        text.push_str(&format!("  {name}:\n"));
        if let Value::Object(fields) = serde_json::to_value(server)? {
            for (key, value) in fields {
                text.push_str(&format!("    {key}: {}\n", serde_json::to_string(&value)?));
            }
        }
    }
    Ok(text)
}

/// `manifest` with its top-level `mcp_servers:` block replaced by `section` (or `section`
/// added at the end). Everything else — comments included — stays as it was.
fn with_section(manifest: &str, section: &str) -> String {
    let lines: Vec<&str> = manifest.split_inclusive('\n').collect();
    let start = lines.iter().position(|l| l.starts_with("mcp_servers:"));
    let Some(start) = start else {
        let mut out = manifest.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(section);
        return out;
    };
    // The block goes on while lines are indented, blank or comments.
    let end = lines[start + 1..]
        .iter()
        .position(|l| !(l.starts_with([' ', '\t', '#']) || l.trim().is_empty()))
        .map_or(lines.len(), |n| start + 1 + n);
    let mut out: String = lines[..start].concat();
    out.push_str(section);
    out.push_str(&lines[end..].concat());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_replaces_only_its_own_block() {
        let manifest = "name: acme\n# the team's servers\nmcp_servers:\n  old:\n    command: \"x\"\n\n  # a comment inside\npolicy:\n  rules: []\n";
        let out = with_section(manifest, "mcp_servers:\n  new:\n    command: \"y\"\n");
        assert_eq!(
            out,
            "name: acme\n# the team's servers\nmcp_servers:\n  new:\n    command: \"y\"\npolicy:\n  rules: []\n"
        );
        let added = with_section("name: acme", "mcp_servers: {}\n");
        assert_eq!(added, "name: acme\nmcp_servers: {}\n");
    }

    #[test]
    fn names_become_jig_names() {
        assert_eq!(jig_name("filesystem"), "filesystem");
        assert_eq!(jig_name("My Server.v2"), "my-server-v2");
        assert_eq!(jig_name("1password"), "mcp-1password");
    }
}
