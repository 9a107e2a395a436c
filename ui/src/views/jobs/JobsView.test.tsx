import { describe, expect, it } from "vitest";
import { screen, waitFor, within } from "@testing-library/react";
import { json } from "../../platform/mock";
import { pathOf, renderWith } from "../../test/render";
import { JobLogTail } from "./JobLogTail";
import JobsView from "./JobsView";

const job = (request_id: string, state: string, open: boolean) => ({
  request_id,
  engine: "slurm",
  handle: request_id === "r-new" ? "42" : "41",
  open,
  created_us: Date.now() * 1000 - 5_000_000,
  updated_us: Date.now() * 1000,
  tool: "acme.latency_report",
  run_id: `run-${request_id}`,
  state,
  principal: "alice",
  duration_ms: open ? null : 2_300,
});

describe("JobsView", () => {
  it("teaches what a job is when there is none", async () => {
    renderWith(<JobsView rest={[]} />, () => json([]));
    expect(await screen.findByRole("heading", { name: "No jobs yet" })).toBeTruthy();
    expect(screen.getByRole("link", { name: "acme.latency_report" }).getAttribute("href")).toBe(
      "#/tools/acme.latency_report",
    );
  });

  it("lists jobs with their state and follows each change the engine announces", async () => {
    let state = "queued";
    const { platform } = renderWith(<JobsView rest={[]} />, (request) =>
      pathOf(request).startsWith("/api/jobs")
        ? json([job("r-new", state, state !== "succeeded"), job("r-old", "failed", false)])
        : json({}, 404),
    );
    const table = await screen.findByRole("table", { name: /Jobs/ });
    const rows = within(table).getAllByRole("row");
    expect(rows).toHaveLength(3);
    expect(rows[1]?.textContent).toContain("slurm 42");
    expect(rows[1]?.textContent).toContain("queued");
    expect(rows[1]?.textContent).toContain("so far");
    expect(rows[2]?.textContent).toContain("2.3 s");
    expect(screen.getByText("1 open · 1 collected")).toBeTruthy();

    state = "succeeded";
    await waitFor(() => {
      expect(platform.listening()).toBe(1);
    });
    platform.emit({
      type: "EventMessage",
      event: "RunStateChanged",
      request_id: "r-new",
      data: { state },
    });
    await waitFor(() => {
      expect(within(table).getAllByRole("row")[1]?.textContent).toContain("succeeded");
    });
    expect(screen.getByText("0 open · 2 collected")).toBeTruthy();
  });
});

describe("JobLogTail", () => {
  it("shows what the job printed so far, and nothing once it has no open job", async () => {
    let open = true;
    const { unmount } = renderWith(<JobLogTail requestId="r-1" />, (request) =>
      pathOf(request) === "/api/jobs/r-1/log" && open
        ? json({ text: "started\n", size: 70_000, truncated: true })
        : new Response(null, { status: 204 }),
    );
    const output = await screen.findByLabelText("The job's output");
    expect(output.textContent).toBe("started\n");
    expect(screen.getByText("(the last 64 KiB of 68.4 KiB)")).toBeTruthy();
    unmount();
    open = false;
    renderWith(<JobLogTail requestId="r-1" />, () => new Response(null, { status: 204 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByLabelText("Output so far")).toBeNull();
  });
});
