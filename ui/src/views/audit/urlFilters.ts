import type { RunFilters } from "../../api/queries";
import { readHashQuery } from "../../lib/hashQuery";

const TEXT = ["q", "tool", "state", "session", "principal"] as const;
const TIMES = ["since_us", "until_us"] as const;

/** The timeline's filters a URL carries (`#/audit?state=denied&since_us=…`). */
export function filtersFromUrl(query: URLSearchParams = readHashQuery()): RunFilters {
  const filters: RunFilters = {};
  for (const key of TEXT) {
    const value = query.get(key);
    if (value) filters[key] = value;
  }
  for (const key of TIMES) {
    const value = Number(query.get(key));
    if (Number.isSafeInteger(value) && value > 0) filters[key] = value;
  }
  return filters;
}

/** The filters as URL values, in a stable order. */
export function filtersToUrl(filters: RunFilters): Record<string, string | number | undefined> {
  return Object.fromEntries([...TEXT, ...TIMES].map((key) => [key, filters[key]]));
}
