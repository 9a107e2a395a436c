import { describe, expect, it } from "vitest";
import { paletteScore } from "./match";

const tools: [string, string][] = [
  ["tool:git_merge", "Merge a branch into the current one"],
  ["tool:fs_move", "Move a file inside the project"],
  ["tool:curl", "Fetch a URL with an allowlisted host"],
  ["tool:git_status", "The working tree's status"],
  ["tool:acme.maintenance-window", "Whether a service is inside its maintenance window"],
  ["tool:file_write", "Write a file: write-up of a change"],
];

function found(search: string): string[] {
  return tools
    .map(([value, description]) => [value, paletteScore(value, search, [description])] as const)
    .filter(([, score]) => score > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([value]) => value);
}

describe("paletteScore", () => {
  it("does not match letters scattered across a name and its description", () => {
    expect(found("maint")).toEqual(["tool:acme.maintenance-window"]);
    expect(found("write-up")).toEqual(["tool:file_write"]);
  });

  it("matches word starts, whole words, and an identifier's initials", () => {
    expect(found("git")).toEqual(["tool:git_merge", "tool:git_status"]);
    expect(found("gs")).toEqual(["tool:git_status"]);
    expect(found("status git")).toEqual(["tool:git_status"]);
  });

  it("ranks a match in the name above one only in the description", () => {
    expect(found("file")).toEqual(["tool:file_write", "tool:fs_move"]);
  });

  it("never matches the namespace", () => {
    expect(found("tool")).toEqual([]);
    expect(paletteScore("tool:curl", "")).toBe(1);
  });
});

describe("paletteScore on ids", () => {
  it("finds a run by the start of its id, whatever its namespace", () => {
    const value = "runbook-run:3f2a9c1b-0d4e-4c1a-9b7f-2e8d6a5c4b3a";
    expect(paletteScore(value, "3f2a9c1b", ["incident/write-up"])).toBe(1);
    expect(paletteScore(value, "3f2a", [])).toBeGreaterThan(0);
    expect(paletteScore(value, "runbook", [])).toBe(0);
  });
});
