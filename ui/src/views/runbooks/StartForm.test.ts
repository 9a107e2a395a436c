import { describe, expect, it } from "vitest";
import { problemOf } from "./StartForm";

describe("a runbook input's problem", () => {
  it("is said in words: missing, not a number, not the pattern", () => {
    expect(problemOf("", { type: "string", required: true })).toBe("is required");
    expect(problemOf("", { type: "string" })).toBeNull();
    expect(problemOf("12a", { type: "int" })).toBe("is a whole number");
    expect(problemOf("INC-9", { type: "string", pattern: "INC-[0-9]+" })).toBeNull();
    expect(problemOf("inc 9", { type: "string", pattern: "INC-[0-9]+" })).toBe(
      "does not match INC-[0-9]+",
    );
  });
});
