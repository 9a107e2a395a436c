import { describe, expect, it } from "vitest";
import { axisTime, bucketName, formatShortTime, formatTime, zoneName } from "./format";

describe("bucket names", () => {
  it("says what one bucket spans, in the unit a person would", () => {
    expect(bucketName(60e6)).toBe("minute");
    expect(bucketName(5 * 60e6)).toBe("5 minutes");
    expect(bucketName(15 * 60e6)).toBe("15 minutes");
    expect(bucketName(2 * 3600e6)).toBe("2 hours");
    expect(bucketName(30e6)).toBe("30 seconds");
  });
});

describe("short times", () => {
  const at = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
    new Date(y, mo, d, h, mi, s).getTime() * 1000;

  it("shows today's times as a 24-hour clock", () => {
    const now = new Date(2026, 10, 27, 18, 0, 0);
    expect(formatShortTime(at(2026, 10, 27, 14, 3, 9), now)).toBe("14:03:09");
    expect(formatShortTime(at(2026, 10, 27, 0, 0, 0), now)).toBe("00:00:00");
  });

  it("adds the day to times of other days", () => {
    const now = new Date(2026, 10, 27, 18, 0, 0);
    expect(formatShortTime(at(2026, 10, 26, 23, 59, 59), now)).toBe("Nov 26 23:59:59");
    expect(formatShortTime(at(2026, 0, 5, 7, 8, 9), now)).toBe("Jan 05 07:08:09");
  });
});

describe("full times", () => {
  it("writes an ISO date and a 24-hour clock, local time", () => {
    expect(formatTime(new Date(2026, 10, 7, 9, 5, 1).getTime() * 1000)).toBe("2026-11-07 09:05:01");
  });
});

describe("axisTime", () => {
  it("writes a 24-hour clock, with the date once the chart spans more than a day", () => {
    const at = new Date(2026, 10, 28, 14, 30).getTime() / 1000;
    expect(axisTime(at, 3600)).toBe("14:30");
    expect(axisTime(at, 3 * 86_400)).toBe("11-28 14:30");
  });
});

describe("zoneName", () => {
  it("names the zone and its offset from UTC", () => {
    expect(zoneName(new Date())).toMatch(/^\S+ \(UTC[+-]\d\d:\d\d\)$/);
  });
});
