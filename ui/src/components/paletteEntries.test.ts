import { describe, expect, it } from "vitest";
import { paletteScore } from "../lib/match";
import { rankEntries, type Entry } from "./paletteEntries";

const entry = (group: string, value: string, keywords: string[] = []): Entry => ({
  group,
  key: value,
  value,
  keywords,
  body: null,
  onSelect: () => undefined,
});

const entries = [
  entry("Views", "view:Tools"),
  entry("Views", "view:Audit"),
  entry("Tools", "tool:git_status", ["Show the working tree status"]),
  entry("Tools", "tool:fs_write", ["Write a file"]),
  entry("Tools", "tool:file_read", ["Read a file"]),
  entry("Runbooks", "runbook:incident/file", ["File the write-up"]),
];

const names = (search: string) =>
  rankEntries(entries, search, paletteScore).map((g) => [g.name, g.entries.map((e) => e.key)]);

describe("the palette's ranking", () => {
  it("offers everything in its own order before anything is typed", () => {
    expect(names("")).toEqual([
      ["Views", ["view:Tools", "view:Audit"]],
      ["Tools", ["tool:git_status", "tool:fs_write", "tool:file_read"]],
      ["Runbooks", ["runbook:incident/file"]],
    ]);
  });

  it("leaves out what does not match and puts the best match's group first", () => {
    // A name match beats a description match: file_read before fs_write ("Write a file"),
    // and the runbook's group, whose best is a name match, before the views' order would say.
    expect(names("file")).toEqual([
      ["Tools", ["tool:file_read", "tool:fs_write"]],
      ["Runbooks", ["runbook:incident/file"]],
    ]);
    expect(names("incident")).toEqual([["Runbooks", ["runbook:incident/file"]]]);
    expect(names("status")).toEqual([["Tools", ["tool:git_status"]]]);
    // "tool" is a whole word of tool_lint's name and only the start of "Tools": its group leads.
    expect(
      rankEntries([...entries, entry("Tools", "tool:tool_lint")], "tool", paletteScore).map(
        (g) => g.name,
      ),
    ).toEqual(["Tools", "Views"]);
    expect(names("nothing like this")).toEqual([]);
  });
});
