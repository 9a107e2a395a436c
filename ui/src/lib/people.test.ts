import { describe, expect, it } from "vitest";
import { isMe, personOf } from "./people";

describe("personOf", () => {
  it("drops an agent's mark, as the engine does", () => {
    expect(personOf("alice (via claude-code)")).toBe("alice");
    expect(personOf(" Alice ")).toBe("alice");
  });
  it("keeps a name that only looks like a mark somewhere else", () => {
    expect(personOf("alice (via x) bob")).toBe("alice (via x) bob");
    expect(personOf("(via x)")).toBe("(via x)");
  });
});

describe("isMe", () => {
  it("counts my agents as me and no one else", () => {
    expect(isMe("root (via test-agent)", "root")).toBe(true);
    expect(isMe("root", "root")).toBe(true);
    expect(isMe("rooted", "root")).toBe(false);
    expect(isMe(null, "root")).toBe(false);
    expect(isMe("root", undefined)).toBe(false);
  });
});
