import type { ReactNode } from "react";

/** One thing the palette offers. */
export interface Entry {
  group: string;
  /** Unique among the entries (the option's element id). */
  key: string;
  /** What typed words match first: its name, after an optional `kind:` that never matches. */
  value: string;
  /** What they match too, for less (a description, a state, a person). */
  keywords: string[];
  body: ReactNode;
  onSelect: () => void;
}

export interface Group {
  name: string;
  entries: Entry[];
}

/**
 * The entries that match `search`, grouped. With nothing typed, everything in its own order.
 * Otherwise entries scoring 0 are left out, each group's entries are sorted by score (ties keep
 * their order) and the groups by their best entry, so what fits best is first and Enter takes it.
 */
export function rankEntries(
  entries: Entry[],
  search: string,
  score: (value: string, search: string, keywords: string[]) => number,
): Group[] {
  const typed = search.trim() !== "";
  const groups = new Map<string, { best: number; order: number; scored: [Entry, number][] }>();
  for (const entry of entries) {
    const s = typed ? score(entry.value, search, entry.keywords) : 1;
    if (s <= 0) continue;
    let group = groups.get(entry.group);
    if (!group) {
      group = { best: 0, order: groups.size, scored: [] };
      groups.set(entry.group, group);
    }
    group.best = Math.max(group.best, s);
    group.scored.push([entry, s]);
  }
  return [...groups.entries()]
    .sort(([, a], [, b]) => (typed ? b.best - a.best : 0) || a.order - b.order)
    .map(([name, g]) => ({
      name,
      entries: (typed ? [...g.scored].sort((a, b) => b[1] - a[1]) : g.scored).map(([e]) => e),
    }));
}
