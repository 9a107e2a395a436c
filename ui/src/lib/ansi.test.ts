import { describe, expect, it } from "vitest";
import { parseAnsi, parseAnsiFrom, stripAnsi } from "./ansi";

describe("parseAnsi", () => {
  it("turns SGR colours and weight into runs, and resets", () => {
    expect(parseAnsi("ok \u001b[1;31mFAIL\u001b[0m done")).toEqual([
      { text: "ok " },
      { text: "FAIL", bold: true, fg: "red" },
      { text: " done" },
    ]);
    expect(parseAnsi("\u001b[92mgreen")).toEqual([{ text: "green", fg: "bright-green" }]);
  });

  it("drops every other escape: no clearing the screen, moving the cursor or setting a title", () => {
    const runs = parseAnsi("a\u001b[2J\u001b[H\u001b]0;evil title\u0007b\u001b[38;5;196mc");
    expect(runs.map((r) => r.text).join("")).toBe("abc");
  });

  it("keeps each state of a line a progress bar redraws", () => {
    expect(stripAnsi("10%\r50%\r100%\n")).toBe("10%\n50%\n100%\n");
  });

  it("ends in the style in force after the last code, even with no text after it", () => {
    expect(parseAnsiFrom("\u001b[31mred\u001b[0m")[1]).toEqual({});
    expect(parseAnsiFrom("plain\u001b[1;34m")[1]).toEqual({ bold: true, fg: "blue" });
  });

  it("carries a style into the next part of a stream", () => {
    expect(parseAnsi("still red", { fg: "red" })).toEqual([{ text: "still red", fg: "red" }]);
  });
});
