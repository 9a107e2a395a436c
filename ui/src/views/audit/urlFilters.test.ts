import { describe, expect, it } from "vitest";
import { filtersFromUrl, filtersToUrl } from "./urlFilters";

describe("the audit's filters in the URL", () => {
  it("round-trips text and times, and drops what is not a filter", () => {
    const query = new URLSearchParams(
      "state=denied&tool=file_write&since_us=1700000000000000&until_us=nope&junk=1",
    );
    const filters = filtersFromUrl(query);
    expect(filters).toEqual({ state: "denied", tool: "file_write", since_us: 1700000000000000 });
    const back = new URLSearchParams();
    for (const [k, v] of Object.entries(filtersToUrl(filters)))
      if (v !== undefined) back.set(k, String(v));
    expect(filtersFromUrl(back)).toEqual(filters);
  });
});
