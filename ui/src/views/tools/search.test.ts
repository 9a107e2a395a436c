import { describe, expect, it } from "vitest";
import type { ToolSummary } from "../../api/client";
import { noFilters, rows, searchTools, toolIndex } from "./search";

function tool(id: string, extra: Partial<ToolSummary> = {}): ToolSummary {
  return {
    id,
    version: "1.0.0",
    description: `The ${id} tool`,
    tags: [],
    package: id.split(".")[0] ?? "std",
    kind: "cli",
    side_effects: ["none"],
    risk: "low",
    deterministic: true,
    verdict: { action: "allow", rule: "r", reason: "" },
    ...extra,
  };
}

describe("tool search", () => {
  const tools = [
    tool("acme.slugify", { tags: ["text"] }),
    tool("acme.deploy_status", { side_effects: ["network"], risk: "medium" }),
    tool("std.file_write", { side_effects: ["write"], kind: "builtin" }),
  ];
  const index = toolIndex(tools);

  it("matches fuzzily, best first, and lists everything for no text", () => {
    expect(searchTools(tools, index, "slugfy", noFilters()).map((t) => t.id)).toEqual([
      "acme.slugify",
    ]);
    expect(searchTools(tools, index, "", noFilters())).toHaveLength(3);
    // One letter: the tools with a word of the id starting with it.
    expect(searchTools(tools, index, "s", noFilters()).map((t) => t.id)).toEqual([
      "acme.slugify",
      "acme.deploy_status",
      "std.file_write",
    ]);
    expect(searchTools(tools, index, "w", noFilters()).map((t) => t.id)).toEqual([
      "std.file_write",
    ]);
  });

  it("puts the tool whose id holds every word typed first, whatever the descriptions say", () => {
    const builtins = [
      tool("ast_generate", { description: "Parse source files and read them into an index" }),
      tool("file_write", { description: "Write a file" }),
      tool("file_read", { description: "Read a text file from the workspace" }),
    ];
    const ids = searchTools(builtins, toolIndex(builtins), "file read", noFilters()).map(
      (t) => t.id,
    );
    expect(ids[0]).toBe("file_read");
  });

  it("narrows by side effects, risk and kind together", () => {
    const filters = noFilters();
    filters.sideEffects.add("write");
    filters.sideEffects.add("network");
    expect(searchTools(tools, index, "", filters).map((t) => t.id)).toEqual([
      "acme.deploy_status",
      "std.file_write",
    ]);
    filters.kinds.add("builtin");
    expect(searchTools(tools, index, "", filters).map((t) => t.id)).toEqual(["std.file_write"]);
  });

  it("groups by package only when not searching", () => {
    expect(
      rows(tools, true).map((r) => (r.kind === "package" ? `# ${r.name}` : r.tool.id)),
    ).toEqual(["# acme", "acme.slugify", "acme.deploy_status", "# std", "std.file_write"]);
    expect(rows(tools, false)).toHaveLength(3);
  });
});
