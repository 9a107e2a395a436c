// Times are written by hand, not by `Intl`: the first `Intl` formatter a page builds loads the
// locale's data, which takes 45–90 ms on a small machine — on the audit view's way to its first
// rows. A record's times read best unambiguous anyway: ISO dates, a 24-hour clock.
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const two = (n: number) => String(n).padStart(2, "0");

/** `14:03:09`, local time. */
function clockTime(date: Date): string {
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** A time in µs since the epoch, as a local date and time to the second: `2026-11-27 14:03:09`. */
export function formatTime(us: number): string {
  const date = new Date(us / 1000);
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${clockTime(date)}`;
}

/** A time in µs, compact for a table row: the time today (`14:03:09`), else `Nov 27 14:03:09`. */
export function formatShortTime(us: number, now: Date = new Date()): string {
  const date = new Date(us / 1000);
  const time = clockTime(date);
  if (date.toDateString() === now.toDateString()) return time;
  return `${MONTHS[date.getMonth()] ?? ""} ${two(date.getDate())} ${time}`;
}

/** A duration in ms, short (`12 ms`, `1.4 s`, `2 min 5 s`). */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** `n` and its noun, singular for one: "1 run", "3 runs". */
export function count(n: unknown, noun: string): string {
  return `${String(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/** A short prefix of an id, enough to tell ids apart on screen. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** Pretty JSON. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** "minute", "5 minutes", "2 hours": what one bucket spans. */
export function bucketName(us: number): string {
  if (us < 60e6) return `${Math.round(us / 1e6)} seconds`;
  const minutes = Math.round(us / 60e6);
  if (minutes === 1) return "minute";
  if (minutes < 120 || minutes % 60 !== 0) return `${minutes} minutes`;
  return `${minutes / 60} hours`;
}

/** A size in bytes, short (`812 B`, `4.2 KiB`, `3.1 MiB`). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * A chart's time tick, in the app's own style (ISO dates, a 24-hour clock): the time of day
 * when the chart spans a day or less, else the date and the time. `seconds` since the epoch.
 */
export function axisTime(seconds: number, spanSeconds: number): string {
  const date = new Date(seconds * 1000);
  const hm = `${two(date.getHours())}:${two(date.getMinutes())}`;
  if (spanSeconds <= 86_400) return hm;
  return `${two(date.getMonth() + 1)}-${two(date.getDate())} ${hm}`;
}

/** The person's time zone as the app shows times in it: `Europe/Berlin (UTC+01:00)`. */
export function zoneName(at: Date = new Date()): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const minutes = -at.getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${zone} (UTC${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)})`;
}
