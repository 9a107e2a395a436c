import uFuzzy from "@leeoniya/ufuzzy";
import type { ToolSummary } from "../../api/client";

/** What narrows the tool list besides the text: each set empty means "any". */
export interface ToolFilters {
  tags: Set<string>;
  sideEffects: Set<string>;
  risks: Set<string>;
  packages: Set<string>;
  kinds: Set<string>;
}

export function noFilters(): ToolFilters {
  return {
    tags: new Set(),
    sideEffects: new Set(),
    risks: new Set(),
    packages: new Set(),
    kinds: new Set(),
  };
}

/**
 * A fuzzy index over the registry: one line per tool (id first, then tags, package and
 * description), searched with uFuzzy, which filters with one regular expression per term and
 * tolerates one typo per term. (fuse.js took 140–440 ms a keystroke over 10,000 tools here; see
 * docs/benchmarks.md.)
 */
export interface ToolIndex {
  haystack: string[];
  /** The first letters of the words of each id (`acme.deploy_status` → `ads`). */
  initials: string[];
  fuzzy: uFuzzy;
}

export function toolIndex(tools: readonly ToolSummary[]): ToolIndex {
  return {
    haystack: tools.map((t) => `${t.id} ${t.tags.join(" ")} ${t.package} ${t.description}`),
    initials: tools.map((t) =>
      t.id
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .map((word) => word.charAt(0))
        .join(""),
    ),
    // IntraMode.SingleError, one typo per term: the library's enum is a declared const enum,
    // which isolated modules cannot read, so its value is written here.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment
    fuzzy: new uFuzzy({ intraMode: 1, intraIns: 1 }),
  };
}

/** The matching tools, best first (ranked when few enough to rank; else ids that contain the
 * query first, then the rest in registry order). */
function matching(tools: readonly ToolSummary[], index: ToolIndex, query: string): ToolSummary[] {
  // One letter matches almost everything fuzzily: take the tools with a word of the id starting
  // with it instead, which is what a person typing one letter is after, and cheap.
  if (query.length === 1) {
    const letter = query.toLowerCase();
    return tools.filter((_, i) => index.initials[i]?.includes(letter));
  }
  const [idxs, info, order] = index.fuzzy.search(index.haystack, query, 1, 1000);
  const pick = (i: number | undefined) => (i === undefined ? undefined : tools[i]);
  const found = info
    ? order.flatMap((o) => pick(info.idx[o]) ?? [])
    : (idxs ?? []).flatMap((i) => pick(i) ?? []);
  // A tool whose id holds every word typed is what was asked for ("file read" → file_read),
  // whatever the fuzzy ranking made of the descriptions; the order within each part is kept.
  const terms = query
    .toLowerCase()
    .split(/[\s._-]+/)
    .filter(Boolean);
  const inId = (t: ToolSummary) => {
    const id = t.id.toLowerCase();
    return terms.every((term) => id.includes(term));
  };
  return [...found.filter(inId), ...found.filter((t) => !inId(t))];
}

function passes(tool: ToolSummary, filters: ToolFilters): boolean {
  const any = (set: Set<string>, values: readonly string[]) =>
    set.size === 0 || values.some((value) => set.has(value));
  return (
    any(filters.tags, tool.tags) &&
    any(filters.sideEffects, tool.side_effects) &&
    any(filters.risks, [tool.risk]) &&
    any(filters.packages, [tool.package]) &&
    any(filters.kinds, [tool.kind])
  );
}

/** The tools matching the text (best first) and the filters; all of them for empty text. */
export function searchTools(
  tools: readonly ToolSummary[],
  index: ToolIndex,
  text: string,
  filters: ToolFilters,
): ToolSummary[] {
  const query = text.trim();
  const found = query === "" ? tools : matching(tools, index, query);
  return found.filter((tool) => passes(tool, filters));
}

/** Each filter's values across the registry, sorted, for the filter menus. */
export function facets(tools: readonly ToolSummary[]) {
  const collect = (pick: (tool: ToolSummary) => readonly string[]) =>
    [...new Set(tools.flatMap(pick))].sort();
  return {
    tags: collect((t) => t.tags),
    sideEffects: collect((t) => t.side_effects),
    risks: collect((t) => [t.risk]),
    packages: collect((t) => [t.package]),
    kinds: collect((t) => [t.kind]),
  };
}

/** Rows of the list: a heading per package (in registry order), then its tools. */
export type Row =
  { kind: "package"; name: string; count: number } | { kind: "tool"; tool: ToolSummary };

/** Group by package when listing everything; keep the ranking when searching. */
export function rows(found: readonly ToolSummary[], grouped: boolean): Row[] {
  if (!grouped) return found.map((tool) => ({ kind: "tool", tool }));
  const byPackage = new Map<string, ToolSummary[]>();
  for (const tool of found) {
    const list = byPackage.get(tool.package) ?? [];
    list.push(tool);
    byPackage.set(tool.package, list);
  }
  const out: Row[] = [];
  // Package names are ids: compared by code unit, not by a collator (whose first use loads the
  // locale's data, tens of ms before the tool list can show).
  for (const [name, list] of [...byPackage].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.push({ kind: "package", name, count: list.length });
    for (const tool of list) out.push({ kind: "tool", tool });
  }
  return out;
}
