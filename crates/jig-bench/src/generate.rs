//! A generated project: a root package requiring `packages` packages with `tools` toolpacks in
//! all. Every tool has its own input and output schema (distinct property names, enums and
//! descriptions, so no two schemas are equal), and both `$ref` its package's shared definitions.

use std::fmt::Write as _;
use std::path::Path;

pub fn project(root: &Path, tools: usize, packages: usize) -> anyhow::Result<()> {
    let per_package = tools.div_ceil(packages);
    let mut manifest = String::from("name: bench\nrequire:\n");
    for p in 0..packages {
        writeln!(manifest, "  p{p}: packages/p{p}")?;
    }
    fs_err::write(root.join("jig.yaml"), manifest)?;
    let mut written = 0;
    for p in 0..packages {
        let dir = root.join(format!("packages/p{p}"));
        fs_err::create_dir_all(dir.join("tools"))?;
        fs_err::create_dir_all(dir.join("schemas"))?;
        fs_err::write(dir.join("jig.yaml"), format!("name: p{p}\n"))?;
        fs_err::write(dir.join("schemas/common.json"), COMMON)?;
        for t in 0..per_package.min(tools - written) {
            fs_err::write(dir.join(format!("tools/t{t}.tool.yaml")), tool(p, t))?;
            written += 1;
        }
    }
    Ok(())
}

const COMMON: &str = r##"{
  "$defs": {
    "name": { "type": "string", "minLength": 1, "maxLength": 100 },
    "count": { "type": "integer", "minimum": 0 },
    "result": {
      "type": "object",
      "properties": { "ok": { "type": "boolean" }, "items": { "type": "array", "items": { "$ref": "#/$defs/name" } } },
      "required": ["ok"]
    }
  }
}
"##;

/// One tool file, the path of the tool edited by the reload benchmark included.
pub fn tool(p: usize, t: usize) -> String {
    format!(
        "id: p{p}.tool_{t}\n\
         version: 1.0.{t}\n\
         description: Generated tool {t} of package {p}.\n\
         tags: [bench, p{p}]\n\
         deterministic: true\n\
         sideEffects: [read]\n\
         timeoutMs: {timeout}\n\
         limits: {{ maxInputBytes: 1024, maxOutputBytes: 4096 }}\n\
         inputSchema:\n\
         \x20 type: object\n\
         \x20 properties:\n\
         \x20   name_{t}: {{ $ref: ../schemas/common.json#/$defs/name }}\n\
         \x20   count_{t}: {{ $ref: ../schemas/common.json#/$defs/count, description: \"count for tool {t}\" }}\n\
         \x20   flag: {{ type: boolean, default: false }}\n\
         \x20   mode: {{ enum: [fast, slow, m{t}] }}\n\
         \x20 required: [name_{t}]\n\
         \x20 additionalProperties: false\n\
         outputSchema:\n\
         \x20 type: object\n\
         \x20 properties:\n\
         \x20   result: {{ $ref: ../schemas/common.json#/$defs/result }}\n\
         \x20   elapsed_ms_{t}: {{ type: number, minimum: 0 }}\n\
         execution:\n\
         \x20 kind: cli\n\
         \x20 cmd: [echo, \"{{{{ name_{t} }}}}\", \"--count={{{{ count_{t} }}}}\"]\n\
         templating: {{ engine: jinja2 }}\n",
        timeout = 1000 + t
    )
}
