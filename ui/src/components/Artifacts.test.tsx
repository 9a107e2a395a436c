import { describe, expect, it } from "vitest";
import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { json } from "../platform/mock";
import { pathOf, renderWith } from "../test/render";
import { Artifacts, artifactsOf, fileName } from "./Artifacts";

const summary = {
  role: "summary",
  type: "text/csv",
  label: "Latency percentiles per service",
  sha256: "a".repeat(64),
  size: 42,
  path: ".jig/artifacts/sha256/aa/…",
};
const page = { ...summary, role: "page", type: "text/html", sha256: "b".repeat(64) };
const image = { ...summary, role: "chart", type: "image/png", sha256: "c".repeat(64) };

describe("Artifacts", () => {
  it("reads only well-formed entries of a result's artifacts", () => {
    expect(artifactsOf({ artifacts: [summary, { role: 1 }, null] })).toEqual([summary]);
    expect(artifactsOf({ result: 1 })).toEqual([]);
    expect(artifactsOf(null)).toEqual([]);
    expect(fileName(summary)).toBe("summary.csv");
    expect(fileName({ ...summary, type: "application/x-unknown" })).toBe("summary");
  });

  it("opens text in place, fetched by hash, and saves any artifact by its name", async () => {
    const user = userEvent.setup();
    const { platform } = renderWith(<Artifacts artifacts={[summary, page, image]} />, (request) =>
      pathOf(request) === `/api/artifacts/${summary.sha256}`
        ? new Response("service,p50\ncheckout,12\n")
        : pathOf(request) === `/api/artifacts/${page.sha256}`
          ? json({ code: "E_NOT_FOUND", message: "no artifact" }, 404)
          : json({}, 500),
    );
    expect(screen.getByRole("heading", { name: "Artifacts (3)" })).toBeTruthy();
    // Images are saved, not viewed.
    expect(screen.queryByRole("button", { name: "View chart" })).toBeNull();

    const view = screen.getByRole("button", { name: "View summary" });
    expect(view.getAttribute("aria-expanded")).toBe("false");
    await user.click(view);
    const text = await screen.findByLabelText("summary: Latency percentiles per service");
    await waitFor(() => {
      expect(text.textContent).toContain("checkout,12");
    });
    expect(screen.getByRole("button", { name: "Hide summary" }).getAttribute("aria-expanded")).toBe(
      "true",
    );

    await user.click(screen.getByRole("button", { name: "View page" }));
    expect((await screen.findByRole("alert")).textContent).toContain("E_NOT_FOUND");

    await user.click(screen.getByRole("button", { name: "Save chart as chart.png" }));
    expect(platform.downloads).toEqual([
      [`/api/artifacts/${image.sha256}?name=chart.png`, "chart.png"],
    ]);
  });
});
