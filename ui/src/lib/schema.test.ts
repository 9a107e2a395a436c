import { describe, expect, it } from "vitest";
import { check } from "./schema";

const target = {
  type: "object",
  properties: {
    target: {
      oneOf: [
        {
          title: "A branch",
          type: "object",
          properties: { branch: { type: "string" } },
          required: ["branch"],
        },
        {
          title: "A tag",
          type: "object",
          properties: { tag: { type: "string" } },
          required: ["tag"],
        },
      ],
    },
  },
};

describe("check", () => {
  it("names a oneOf's options and what each still needs", () => {
    expect(check(target, { target: {} })).toEqual([
      ".target: choose one of: A branch (needs branch); A tag (needs tag)",
    ]);
  });

  it("says so when a value fits several options", () => {
    expect(check(target, { target: { branch: "main", tag: "v1" } })).toEqual([
      ".target: fits more than one of: A branch; A tag",
    ]);
  });
});
