/**
 * Times typed by people, in their own zone, as ISO text: `2026-01-05 09:30` (seconds optional).
 * A schema's `date-time` is an instant: what a form sends is that local time as UTC
 * (`2026-01-05T08:30:00.000Z` from Berlin in winter).
 */

const two = (n: number) => String(n).padStart(2, "0");

/** An instant (ISO 8601) as the person's local `YYYY-MM-DD HH:MM[:SS]`; "" for none or garbage. */
export function toLocalText(value: unknown): string {
  if (typeof value !== "string" || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const day = `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
  const seconds = date.getSeconds() === 0 ? "" : `:${two(date.getSeconds())}`;
  return `${day} ${two(date.getHours())}:${two(date.getMinutes())}${seconds}`;
}

/** Local `YYYY-MM-DD HH:MM[:SS]` (or with a `T`) as an instant in UTC; `null` when it is not one. */
export function fromLocalText(text: string): string | null {
  const m = /^\s*(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?\s*$/.exec(text);
  if (!m) return null;
  const at = (i: number) => Number(m[i] ?? 0);
  const [y, mo, d] = [at(1), at(2), at(3)];
  const date = new Date(y, mo - 1, d, at(4), at(5), at(6));
  // 2026-02-31 rolls over in Date: refuse it instead of sending another day.
  if (date.getMonth() !== mo - 1 || date.getDate() !== d) return null;
  return date.toISOString();
}
