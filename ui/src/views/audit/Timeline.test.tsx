import { describe, expect, it } from "vitest";
import { screen, waitFor } from "@testing-library/react";
import { json } from "../../platform/mock";
import { pathOf, renderWith } from "../../test/render";
import { Timeline } from "./Timeline";

function run(i: number) {
  return {
    request_id: `r${String(i).padStart(7, "0")}`,
    run_id: `run-${i}`,
    tool: i % 2 === 0 ? "acme.slugify" : "file_read",
    version: "1.0.0",
    params_hash: "p",
    policy_hash: "h",
    deterministic: true,
    state: i % 5 === 0 ? "failed" : "succeeded",
    rule: "rules[1]",
    principal: "alice",
    session_id: "web",
    created_us: 1_790_000_000_000_000 - i * 1_000_000,
    updated_us: 1_790_000_000_000_000 - i * 1_000_000,
    duration_ms: 12,
  };
}

/** A store of `total` runs, served 200 a page by cursor as the API does. */
function pages(total: number, seen: string[]) {
  return (request: Request) => {
    const url = new URL(request.url);
    if (!url.pathname.startsWith("/api/audit/runs")) return json({}, 404);
    seen.push(pathOf(request));
    const after = Number(url.searchParams.get("after") ?? "0");
    const limit = Number(url.searchParams.get("limit") ?? "100");
    const runs = Array.from({ length: Math.max(0, Math.min(limit, total - after)) }, (_, k) =>
      run(after + k),
    );
    const next = after + runs.length < total ? String(after + runs.length) : null;
    return json({ runs, next });
  };
}

describe("the audit timeline", () => {
  it("draws only the rows on screen of a long history and pages on with the cursor", async () => {
    const seen: string[] = [];
    renderWith(
      <Timeline
        filters={{ tool: "acme.slugify" }}
        selected={undefined}
        marked={[]}
        onToggleMark={() => {}}
      />,
      pages(100_000, seen),
    );
    await screen.findByText("200 runs loaded, more as you scroll");
    // A header and a screenful plus overscan: far fewer than the 200 loaded.
    await waitFor(() => {
      expect(screen.getAllByRole("row").length).toBeGreaterThan(20);
    });
    expect(screen.getAllByRole("row").length).toBeLessThan(80);
    expect(screen.getByText("r0000000")).toBeInTheDocument();
    expect(seen[0]).toContain("tool=acme.slugify");
    expect(seen[0]).toContain("limit=200");
    expect(screen.getByText(/runs loaded, more as you scroll/)).toBeInTheDocument();
  });

  it("teaches when there is nothing, and says when the filters hide everything", async () => {
    renderWith(
      <Timeline filters={{}} selected={undefined} marked={[]} onToggleMark={() => {}} />,
      pages(0, []),
    );
    expect(await screen.findByText("No runs yet")).toBeInTheDocument();
  });

  it("says when filters match nothing", async () => {
    renderWith(
      <Timeline
        filters={{ q: "nothing" }}
        selected={undefined}
        marked={[]}
        onToggleMark={() => {}}
      />,
      pages(0, []),
    );
    await waitFor(() => {
      expect(screen.getByText("No run matches")).toBeInTheDocument();
    });
  });
});
