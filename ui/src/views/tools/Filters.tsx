import type { ToolFilters } from "./search";

type Facets = Record<keyof ToolFilters, string[]>;

const labels: Record<keyof ToolFilters, string> = {
  sideEffects: "Side effects",
  risks: "Risk",
  kinds: "Kind",
  packages: "Package",
  tags: "Tag",
};

/** One select per facet (multi-valued sets, chosen one at a time, shown as removable chips). */
export function Filters({
  options,
  filters,
  onChange,
}: {
  options: Facets;
  filters: ToolFilters;
  onChange: (filters: ToolFilters) => void;
}) {
  const keys = Object.keys(labels) as (keyof ToolFilters)[];
  const toggle = (key: keyof ToolFilters, value: string) => {
    const next = new Set(filters[key]);
    if (next.has(value)) next.delete(value);
    else next.add(value);
    onChange({ ...filters, [key]: next });
  };
  const chips = keys.flatMap((key) => [...filters[key]].map((value) => ({ key, value })));
  return (
    <div className="filters">
      <div className="row">
        {keys.map((key) => (
          <select
            key={key}
            aria-label={`Filter by ${labels[key].toLowerCase()}`}
            value=""
            onChange={(e) => {
              if (e.target.value) toggle(key, e.target.value);
            }}
          >
            <option value="">{labels[key]}</option>
            {options[key].map((value) => (
              <option key={value} value={value}>
                {filters[key].has(value) ? `✓ ${value}` : value}
              </option>
            ))}
          </select>
        ))}
      </div>
      {chips.length > 0 && (
        <div className="row chips">
          {chips.map(({ key, value }) => (
            <button
              type="button"
              key={`${key}:${value}`}
              className="badge"
              aria-label={`Remove filter ${labels[key]}: ${value}`}
              onClick={() => {
                toggle(key, value);
              }}
            >
              {labels[key]}: {value} ✕
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
