//! The runbooks of every package: which files are runbooks, the scenarios recorded beside
//! each, and the registry's entries for them with the tools they reference.

use super::tools::actions_of;
use super::*;

/// The runbook files under `dir`: every `*.runbook.yaml`, and — as gert lays projects out —
/// plain `*.yaml` files that declare a runbook `apiVersion`, outside `scenarios/` directories.
pub(super) fn runbooks_in(package: &Package, dir: &Path) -> Vec<PathBuf> {
    let mut found = package.vfs.walk(dir, ".runbook.yaml");
    for path in package.vfs.walk(dir, ".yaml") {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let in_scenarios = path
            .strip_prefix(dir)
            .map(|rest| rest.components().any(|c| c.as_os_str() == "scenarios"))
            .unwrap_or(false);
        if name.ends_with(".runbook.yaml") || name.ends_with(".tool.yaml") || in_scenarios {
            continue;
        }
        if package.vfs.read(&path, 1 << 20).is_ok_and(|text| declares_runbook(&text)) {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// Whether a YAML document's top-level `apiVersion` is a runbook format.
pub(super) fn declares_runbook(text: &str) -> bool {
    text.lines().any(|line| {
        let Some(value) = line.strip_prefix("apiVersion:") else { return false };
        let value = value.split('#').next().unwrap_or("").trim().trim_matches(['"', '\'']);
        matches!(value, "kernel/v0" | "runbook/v0" | "runbook/v1")
    })
}

/// Where gert keeps the scenarios of the runbook file at `path`: `scenarios/<name>/` beside it,
/// `<name>` the file's name without `.runbook.yaml` (or `.yaml`).
pub fn scenarios_beside(path: &Path) -> PathBuf {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let base = file_name
        .strip_suffix(".runbook.yaml")
        .or_else(|| file_name.strip_suffix(".yaml"))
        .unwrap_or(&file_name);
    path.parent().unwrap_or(Path::new("")).join("scenarios").join(base)
}

/// Scenario directories for the runbook at `path`: `scenarios/<name>/*/` beside it (gert) and
/// at the package root (seed 004).
pub(super) fn scenarios_for(
    package: &Package,
    path: &Path,
    display: &dyn Fn(&Path) -> String,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<runbook_file::ScenarioFiles> {
    let beside = scenarios_beside(path);
    let base = beside.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    let mut dirs = vec![beside];
    let at_root = package.root.join("scenarios").join(&base);
    if !dirs.contains(&at_root) {
        dirs.push(at_root);
    }
    dirs.iter()
        .filter(|dir| package.vfs.is_dir(dir))
        .flat_map(|dir| {
            runbook_file::load_scenarios(
                package.vfs.as_ref(),
                &package.root,
                dir,
                display,
                diagnostics,
            )
        })
        .collect()
}

/// The registry name of runbook `name` of package `p`: as is in the root package, else
/// qualified by the package's name.
pub(super) fn registry_name(layout: &Layout, p: usize, name: &str) -> String {
    let package = &layout.packages[p];
    match package.role {
        PackageRole::Root => name.to_owned(),
        _ => format!("{}/{name}", package.name),
    }
}

pub(super) fn runbook_entries(
    layout: &Layout,
    index: &Index<'_>,
    display: &dyn Fn(&Path) -> String,
) -> BTreeMap<String, Arc<RunbookEntry>> {
    let mut out = BTreeMap::new();
    for (p, runbooks) in index.runbooks.iter().enumerate() {
        let package = &layout.packages[p];
        for (name, file) in runbooks {
            let Some(runbook) = &file.runbook else { continue };
            let full_name = registry_name(layout, p, name);
            let scenarios: Vec<ScenarioEntry> = file
                .scenarios
                .iter()
                .map(|s| ScenarioEntry {
                    name: s.name.clone(),
                    dir: display(&s.dir),
                    scenario: s.scenario.as_ref().map(|(_, v)| v.clone()),
                    test: s.test.as_ref().map(|(_, v)| v.clone()),
                })
                .collect();
            let hash = Sha256Hash::of_serializable(&(runbook, &scenarios))
                .map(|h| h.to_hex())
                .unwrap_or_default();
            let tools = runbook
                .tools
                .iter()
                .filter_map(|reference| {
                    // runbook/v0's map form names the tool file by its path.
                    let file = match runbook.tool_paths.get(reference) {
                        Some(raw) => index.tool_file_at(&file.path, raw)?,
                        None => index.tool(p, reference).ok()?.1,
                    };
                    Some((reference.clone(), actions_of(&file)))
                })
                .collect();
            // A logical name first (as the checker resolves it), then a v0 path.
            let next_runbooks = runbook
                .walk()
                .iter()
                .filter_map(|step| step.legacy.as_deref())
                .flat_map(|legacy| &legacy.outcomes)
                .filter_map(|outcome| outcome.next_runbook.as_ref())
                .filter_map(|next| {
                    let reference = next.file.as_str();
                    let target = match index.runbook(p, reference) {
                        Ok(_) => registry_name(layout, p, reference),
                        Err(_) => {
                            let (q, name) = index.runbook_file_at(&file.path, reference)?;
                            registry_name(layout, q, name)
                        }
                    };
                    Some((reference.to_owned(), target))
                })
                .collect();
            let entry = RunbookEntry {
                name: full_name.clone(),
                package: package.name.clone(),
                file: display(&file.path),
                runbook: runbook.clone(),
                scenarios,
                hash,
                tools,
                next_runbooks,
            };
            out.insert(full_name, Arc::new(entry));
        }
    }
    out
}
