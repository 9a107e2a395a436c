//! JSON Schemas of Jig's file formats, generated from the types in this crate.
//!
//! They are committed under `schemas/` so editors can validate and complete `*.tool.yaml`,
//! `jig.yaml` and runbook files; the loader validates documents against the very same schemas,
//! so the editor and `jig validate` can never disagree. A test fails when the committed copies
//! are stale (`UPDATE_SCHEMAS=1 cargo test -p jig-model` rewrites them).

use schemars::Schema;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use serde_json::Value;

use crate::gert_tool::GertTool;
use crate::manifest::Manifest;
use crate::policy::PolicyLayerFile;
use crate::runbook::kernel::KernelRunbook;
use crate::runbook::legacy::LegacyRunbook;
use crate::scenario::{Scenario, ScenarioTest};
use crate::toolpack::Toolpack;

/// One of Jig's file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileFormat {
    /// A seed-000 toolpack.
    Toolpack,
    /// gert `tool/v0`.
    GertTool,
    /// `jig.yaml` / `gert.yaml`.
    Manifest,
    /// `runbook/v0` and `runbook/v1`.
    LegacyRunbook,
    /// `kernel/v0`.
    KernelRunbook,
    /// `scenario.yaml`.
    Scenario,
    /// `test.yaml`.
    ScenarioTest,
    /// A policy layer above the project (`/etc/jig/policy.yaml`, a person's, a team's).
    PolicyLayer,
}

impl FileFormat {
    /// Every format, in the order of `schemas/`.
    pub const ALL: [FileFormat; 8] = [
        Self::Toolpack,
        Self::GertTool,
        Self::Manifest,
        Self::LegacyRunbook,
        Self::KernelRunbook,
        Self::Scenario,
        Self::ScenarioTest,
        Self::PolicyLayer,
    ];

    /// The file name under `schemas/`.
    pub fn schema_file_name(self) -> &'static str {
        match self {
            Self::Toolpack => "toolpack.schema.json",
            Self::GertTool => "tool-v0.schema.json",
            Self::Manifest => "manifest.schema.json",
            Self::LegacyRunbook => "runbook-v1.schema.json",
            Self::KernelRunbook => "runbook-kernel-v0.schema.json",
            Self::Scenario => "scenario.schema.json",
            Self::ScenarioTest => "scenario-test.schema.json",
            Self::PolicyLayer => "policy-layer.schema.json",
        }
    }

    /// What people call this kind of file.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Toolpack => "toolpack",
            Self::GertTool => "tool/v0 tool",
            Self::Manifest => "manifest",
            Self::LegacyRunbook => "runbook",
            Self::KernelRunbook => "kernel/v0 runbook",
            Self::Scenario => "scenario",
            Self::ScenarioTest => "scenario test",
            Self::PolicyLayer => "policy layer",
        }
    }

    /// The generated JSON Schema (draft 2020-12).
    pub fn schema(self) -> Value {
        // `null` is not a valid spelling of "absent" in Jig files: an empty `description:` is a
        // mistake worth reporting, so optional fields do not accept null.
        let generator = SchemaSettings::draft2020_12()
            .with_transform(RecursiveTransform(drop_null_type))
            .into_generator();
        let schema = match self {
            Self::Toolpack => generator.into_root_schema_for::<Toolpack>(),
            Self::GertTool => generator.into_root_schema_for::<GertTool>(),
            Self::Manifest => generator.into_root_schema_for::<Manifest>(),
            Self::LegacyRunbook => generator.into_root_schema_for::<LegacyRunbook>(),
            Self::KernelRunbook => generator.into_root_schema_for::<KernelRunbook>(),
            Self::Scenario => generator.into_root_schema_for::<Scenario>(),
            Self::ScenarioTest => generator.into_root_schema_for::<ScenarioTest>(),
            Self::PolicyLayer => generator.into_root_schema_for::<PolicyLayerFile>(),
        };
        schema.to_value()
    }
}

/// `type: ["string", "null"]` → `type: "string"`, and `anyOf: [X, {type: null}]` → `X`.
fn drop_null_type(schema: &mut Schema) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    let null_schema = serde_json::json!({ "type": "null" });
    if let Some(Value::Array(options)) = schema.get_mut("anyOf")
        && options.len() == 2
        && options.contains(&null_schema)
    {
        options.retain(|o| o != &null_schema);
        if let Some(Value::Object(kept)) = options.pop() {
            schema.remove("anyOf");
            for (key, value) in kept {
                schema.insert(key, value);
            }
        }
    }
}

/// The combined schema for any `*.tool.yaml`: a toolpack, or a tool/v0 when `apiVersion` is
/// present. Editors map `*.tool.yaml` to this one.
pub fn tool_file_schema() -> Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://jig.dev/schemas/tool-file.schema.json",
        "title": "Jig tool file (*.tool.yaml)",
        "if": { "type": "object", "required": ["apiVersion"] },
        "then": { "$ref": "tool-v0.schema.json" },
        "else": { "$ref": "toolpack.schema.json" }
    })
}
