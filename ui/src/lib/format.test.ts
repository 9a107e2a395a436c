import { describe, expect, it } from "vitest";
import { bucketName } from "./format";

describe("bucket names", () => {
  it("says what one bucket spans, in the unit a person would", () => {
    expect(bucketName(60e6)).toBe("minute");
    expect(bucketName(5 * 60e6)).toBe("5 minutes");
    expect(bucketName(15 * 60e6)).toBe("15 minutes");
    expect(bucketName(2 * 3600e6)).toBe("2 hours");
    expect(bucketName(30e6)).toBe("30 seconds");
  });
});
