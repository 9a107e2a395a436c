import { describe, expect, it } from "vitest";
import { errorRate } from "./errorRate";

describe("errorRate", () => {
  it("counts failures among the runs that ran, not denials", () => {
    expect(errorRate(10, 1, 0)).toBe(10);
    expect(errorRate(10, 1, 5)).toBe(20);
    expect(errorRate(3, 1, 0)).toBe(33.3);
    expect(errorRate(4, 0, 4)).toBeNull();
    expect(errorRate(0, 0, 0)).toBeNull();
  });
});
