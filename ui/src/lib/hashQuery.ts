/**
 * A view's state in the URL, after the route: `#/audit?state=denied&tool=file_write`. Written
 * with `replaceState` (no history entry per keystroke, no `hashchange`), so a link copied from
 * the address bar opens the same view in the same state, for anyone.
 */

/** The query part of the current hash route. */
export function readHashQuery(): URLSearchParams {
  return new URLSearchParams(window.location.hash.split("?")[1] ?? "");
}

/** Replace the query part of the current hash route (`undefined` and "" values are left out). */
export function writeHashQuery(values: Record<string, string | number | undefined>): void {
  const [path = "#/"] = window.location.hash.split("?");
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  const next = text ? `${path}?${text}` : path;
  if (next !== window.location.hash) {
    window.history.replaceState(window.history.state, "", next);
  }
}
