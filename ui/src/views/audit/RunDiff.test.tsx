import { describe, expect, it } from "vitest";
import { render, screen, within } from "@testing-library/react";
import type { RunDetail } from "../../api/client";
import { jsonDiff } from "../../lib/jsonDiff";
import { Comparison, inOrder } from "./RunDiff";

function detail(id: string, args: unknown, slug: string, rule = "rules[1]"): RunDetail {
  return {
    run: {
      request_id: id,
      run_id: `run-${id}`,
      tool: "acme.slugify",
      version: "2.0.0",
      params_hash: `p-${JSON.stringify(args)}`,
      policy_hash: "h",
      deterministic: true,
      state: "succeeded",
      rule,
      principal: "alice",
      session_id: "web",
      created_us: 1,
      updated_us: 1,
      duration_ms: 5,
      response: { data: { slug } },
    },
    packets: [
      { seq: 1, kind: "tool.call.request", ts_us: 1, data: { args }, prev_hash: "0", hash: "a" },
      {
        seq: 2,
        kind: "tool.call.decision",
        ts_us: 1,
        data: { action: "allow", rule },
        prev_hash: "a",
        hash: "b",
      },
    ],
  } as unknown as RunDetail;
}

describe("the diff of two runs", () => {
  it("names each difference by JSON pointer, section by section", () => {
    render(
      <Comparison
        a={detail("a", { title: "Release 1.2", max_length: 60 }, "release-1-2")}
        b={detail("b", { title: "Release 1.3" }, "release-1-3")}
      />,
    );
    const args = screen.getByRole("region", { name: "Arguments" });
    expect(within(args).getByText("2 differences")).toBeInTheDocument();
    expect(within(args).getByText("/title")).toBeInTheDocument();
    expect(within(args).getByText('"Release 1.2"')).toBeInTheDocument();
    const removed = within(args).getByText("/max_length").closest("tr");
    expect(removed).toHaveAttribute("data-change", "removed");
    expect(
      within(screen.getByRole("region", { name: "Decision" })).getByText("identical"),
    ).toBeInTheDocument();
    expect(
      within(screen.getByRole("region", { name: "Outputs" })).getByText("/data/slug"),
    ).toBeInTheDocument();
  });
});

describe("jsonDiff", () => {
  it("finds changes, additions and removals at any depth, and escapes pointers", () => {
    expect(
      jsonDiff(
        { a: 1, b: [1, 2], "x/y": { z: true } },
        { a: 2, b: [1], c: null, "x/y": { z: true } },
      ),
    ).toEqual([
      { pointer: "/a", change: "changed", left: 1, right: 2 },
      { pointer: "/b/1", change: "removed", left: 2 },
      { pointer: "/c", change: "added", right: null },
    ]);
    expect(jsonDiff({ "a/b~": 1 }, { "a/b~": 2 })[0]?.pointer).toBe("/a~1b~0");
    expect(jsonDiff([1, { k: "v" }], [1, { k: "v" }])).toEqual([]);
    expect(jsonDiff("x", 1)).toEqual([{ pointer: "/", change: "changed", left: "x", right: 1 }]);
  });
});

describe("the order of two runs", () => {
  it("puts the older on the left whichever was marked first", () => {
    const older = detail("r1", { title: "a" }, "a");
    const newer = detail("r2", { title: "b" }, "b");
    (newer.run as { created_us: number }).created_us = 2;
    expect(inOrder(newer, older)).toEqual({ a: older, b: newer });
    expect(inOrder(older, newer)).toEqual({ a: older, b: newer });
  });
});
