import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../api/client";
import { alike, groupRepeats } from "./repeats";

const approval = (id: string, args: unknown, extra: Partial<ApprovalRecord> = {}) =>
  ({
    id,
    tool: "file_write",
    principal: "alice",
    state: "pending",
    request: { tool: "file_write", args },
    ...extra,
  }) as unknown as ApprovalRecord;

describe("groupRepeats", () => {
  it("puts the same pending request of the same person together, and nothing else", () => {
    const groups = groupRepeats([
      approval("a", { path: "x", content: "1" }),
      approval("b", { path: "x", content: "1" }),
      approval("c", { path: "x", content: "2" }),
      approval("d", { path: "x", content: "1" }, { principal: "bob" }),
      approval("e", { path: "x", content: "1" }, { principal: "alice (via claude-code)" }),
      approval("f", { path: "x", content: "1" }, { state: "denied" } as never),
    ]);
    expect(groups.map((g) => [g.approval.id, g.repeats.map((r) => r.id)])).toEqual([
      ["a", ["b", "e"]],
      ["c", []],
      ["d", []],
      ["f", []],
    ]);
  });
});

describe("alike", () => {
  it("links pending groups asking the same of the same tool, whoever asked", () => {
    const groups = groupRepeats([
      approval("a", { path: "x" }),
      approval("b", { path: "x" }, { principal: "bob" }),
      approval("c", { path: "x" }, { principal: "carol" }),
      approval("d", { path: "y" }, { principal: "bob" }),
      approval("e", { path: "x" }, { principal: "dave", tool: "file_delete" }),
      approval("f", { path: "x" }, { principal: "erin", state: "denied" } as never),
    ]);
    const links = alike(groups);
    expect(links.get("a")).toEqual(["b", "c"]);
    expect(links.get("c")).toEqual(["a", "b"]);
    expect(links.get("d")).toEqual([]);
    expect(links.get("e")).toEqual([]);
    expect(links.has("f")).toBe(false);
  });
});
