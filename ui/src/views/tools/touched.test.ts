import { describe, expect, it } from "vitest";
import { touchedWithin } from "./touched";

describe("touchedWithin", () => {
  it("is a field or one inside it, never a sibling or the array around it", () => {
    const touched = new Set(["root_services_0_name", "root_services"]);
    expect(touchedWithin(touched, "root_services_0_name")).toBe(true);
    expect(touchedWithin(touched, "root_services_0")).toBe(true);
    expect(touchedWithin(touched, "root_services")).toBe(true);
    // The item added after it: untouched, so not red.
    expect(touchedWithin(touched, "root_services_1_name")).toBe(false);
    expect(touchedWithin(touched, "root_services_0_environment")).toBe(false);
    expect(touchedWithin(touched, "root_start")).toBe(false);
  });
});
