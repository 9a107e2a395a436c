import { describe, expect, it } from "vitest";
import { fromLocalText, toLocalText } from "./localTime";

describe("local times typed by people", () => {
  it("round-trips a local time through its instant", () => {
    const iso = fromLocalText("2026-01-05 09:30");
    expect(iso).not.toBeNull();
    expect(toLocalText(iso)).toBe("2026-01-05 09:30");
    expect(toLocalText(fromLocalText("2026-07-01T23:59:30"))).toBe("2026-07-01 23:59:30");
  });

  it("refuses what is not a time, and a day that does not exist", () => {
    expect(fromLocalText("01/05/2026 9:30 AM")).toBeNull();
    expect(fromLocalText("2026-02-31 10:00")).toBeNull();
    expect(fromLocalText("")).toBeNull();
    expect(toLocalText(undefined)).toBe("");
  });
});
