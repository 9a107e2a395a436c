import { describe, expect, it } from "vitest";
import { streamEvent } from "./events";

describe("what the event stream delivers", () => {
  it("is an event when it names itself in `event`, and nothing otherwise", () => {
    const response = { event: "ToolResponse", type: "ToolResponse", ok: true };
    expect(streamEvent(response)).toBe(response);
    expect(streamEvent({ event: "EventsLost", missed: 3 })).toEqual({
      event: "EventsLost",
      missed: 3,
    });
    // Seed 002's envelope alone (no `event`), or anything else, is not shown.
    expect(streamEvent({ type: "ToolResponse", ok: true })).toBeNull();
    expect(streamEvent("ToolResponse")).toBeNull();
    expect(streamEvent(null)).toBeNull();
    expect(streamEvent({ event: 7 })).toBeNull();
  });
});
