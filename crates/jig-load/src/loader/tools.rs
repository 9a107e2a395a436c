//! The registry's tools, gathered from every package's parsed tool files: ids checked for
//! duplicates, exports checked against what the files define, upstream servers' tools added.

use super::*;

/// The root manifest's upstream MCP servers, and their discovered tools added to `tools`. A
/// project's own tool keeps its id: an upstream tool that would take it is left out, said in a
/// warning (what a server calls its tools must not replace the project's).
pub(super) fn upstream_tools(
    layout: &Layout,
    tools: &mut BTreeMap<String, Arc<ToolDef>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, crate::UpstreamServer> {
    let Some(package) = layout.packages.first().filter(|p| p.role == PackageRole::Root) else {
        return BTreeMap::new();
    };
    let Some(manifest) = package.manifest.as_ref().filter(|m| !m.mcp_servers.is_empty()) else {
        return BTreeMap::new();
    };
    let file = package
        .manifest_path
        .as_deref()
        .map_or_else(|| "jig.yaml".to_owned(), |p| display_path(p, &layout.root));
    let upstream = crate::upstream::entries(
        &layout.root,
        &file,
        &package.name,
        &manifest.mcp_servers,
        diagnostics,
    );
    for def in upstream.tools {
        if let Some(own) = tools.get(&def.id) {
            diagnostics.push(
                Diagnostic::warning(
                    codes::MCP_SERVER,
                    format!(
                        "the upstream tool `{}` was left out: `{}:{}` defines that id",
                        def.id, own.source.file, own.source.line
                    ),
                )
                .in_file(file.clone())
                .at_pointer(format!("/mcp_servers/{}", def.id.split('.').next().unwrap_or(""))),
            );
            continue;
        }
        tools.insert(def.id.clone(), def);
    }
    upstream.servers
}

/// Every tool entry, with duplicate ids reported against both files. The first definition, in
/// file order, keeps the id; each later one is an error at its own file.
pub(super) fn collect_tools(
    index: &Index<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Arc<ToolDef>> {
    type Entry<'a> = (&'a ToolFile, &'a Arc<ToolDef>);
    let location = |(_, def): &Entry<'_>| (def.source.file.clone(), def.source.line);
    let mut by_id: BTreeMap<&str, Entry<'_>> = BTreeMap::new();
    let mut duplicates: Vec<(Entry<'_>, Entry<'_>)> = Vec::new();
    for files in index.tools {
        for file in files.values() {
            for def in &file.defs {
                let entry = (&**file, def);
                match by_id.entry(def.id.as_str()) {
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(entry);
                    }
                    std::collections::btree_map::Entry::Occupied(mut slot) => {
                        // Keep the earliest in file order, whatever order the index gave.
                        if location(&entry) < location(slot.get()) {
                            let later = slot.insert(entry);
                            duplicates.push((entry, later));
                        } else {
                            duplicates.push((*slot.get(), entry));
                        }
                    }
                }
            }
        }
    }
    for (first, (file, def)) in duplicates {
        let first = first.1;
        let diagnostic = Diagnostic::error(
            codes::TOOL_DUPLICATE,
            format!(
                "tool id `{}` is defined twice: in {} (line {}) and in {} (line {})",
                def.id, first.source.file, first.source.line, def.source.file, def.source.line
            ),
        )
        .with_hint("tool ids are unique across the project and its packages");
        diagnostics.push(match &file.identity {
            Some(identity) => identity.locate(diagnostic),
            None => diagnostic.in_file(def.source.file.clone()),
        });
    }
    by_id.into_iter().map(|(id, (_, def))| (id.to_owned(), Arc::clone(def))).collect()
}

/// `exports.tools` entries must point at tool files.
pub(super) fn check_exports(layout: &Layout, index: &Index<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for (p, package) in layout.packages.iter().enumerate() {
        let Some(exports) = &package.exports else { continue };
        let located = package
            .manifest_path
            .as_ref()
            .and_then(|m| layout.manifests.iter().find(|l| l.display == layout.display(m)));
        for (alias, target) in exports {
            let stem = package::normalize_stem(target);
            if index.tools[p].contains_key(stem) {
                continue;
            }
            let mut diagnostic = Diagnostic::error(
                codes::EXPORT_NOT_FOUND,
                format!(
                    "export `{alias}` points at `{target}`, but there is no {}/{stem}.tool.yaml",
                    layout.display(&package.tools_dir)
                ),
            );
            diagnostic = diagnostic.suggest(stem, index.tools[p].keys().map(String::as_str));
            diagnostics.push(match located {
                Some(located) => located.at(diagnostic, &pointer_push("/exports/tools", alias)),
                None => diagnostic,
            });
        }
    }
}

/// A tool file's registry ids by the action a runbook step names: tool/v0 files one per action
/// (`<tool>.<action>`), a toolpack its one id under no action and under `run`.
pub(super) fn actions_of(file: &crate::toolfile::ToolFile) -> BTreeMap<String, String> {
    match &file.kind {
        Some(crate::toolfile::ToolFileKind::Gert(gert)) => gert
            .actions
            .keys()
            .filter_map(|action| {
                let id = file.defs.iter().find(|d| d.id.ends_with(&format!(".{action}")))?;
                Some((action.clone(), id.id.clone()))
            })
            .collect(),
        _ => file
            .defs
            .first()
            .map(|d| {
                BTreeMap::from([(String::new(), d.id.clone()), ("run".to_owned(), d.id.clone())])
            })
            .unwrap_or_default(),
    }
}
