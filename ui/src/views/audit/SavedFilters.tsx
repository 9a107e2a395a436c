import { useState } from "react";
import type { RunFilters } from "../../api/queries";

const KEY = "jig.audit.saved";

/** Filters saved under names, in this browser. */
function load(): Record<string, RunFilters> {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(KEY) ?? "{}");
    return value !== null && typeof value === "object" ? (value as Record<string, RunFilters>) : {};
  } catch {
    return {};
  }
}

/**
 * Named filters of the timeline, kept in this browser: pick one to apply it, save the current
 * ones under a name, delete the one picked. (A filter to share is a link: the URL carries it.)
 */
export function SavedFilters({
  filters,
  onPick,
}: {
  filters: RunFilters;
  onPick: (filters: RunFilters) => void;
}) {
  const [saved, setSaved] = useState(load);
  const [picked, setPicked] = useState("");
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState("");
  const store = (next: Record<string, RunFilters>) => {
    localStorage.setItem(KEY, JSON.stringify(next));
    setSaved(next);
  };
  const names = Object.keys(saved).sort();
  const empty = Object.values(filters).every((v) => v === undefined || v === "");
  return (
    <div className="row saved-filters" role="group" aria-label="Saved filters">
      <select
        aria-label="Saved filters"
        value={picked}
        onChange={(e) => {
          setPicked(e.target.value);
          const chosen = saved[e.target.value];
          if (chosen) onPick(chosen);
        }}
      >
        <option value="">{names.length === 0 ? "No saved filters" : "Saved filters…"}</option>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      {picked && (
        <button
          type="button"
          className="ghost"
          aria-label={`Delete the saved filter ${picked}`}
          onClick={() => {
            store(Object.fromEntries(Object.entries(saved).filter(([n]) => n !== picked)));
            setPicked("");
          }}
        >
          Delete
        </button>
      )}
      {naming ? (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            const chosen = name.trim();
            if (!chosen) return;
            store({ ...saved, [chosen]: filters });
            setPicked(chosen);
            setNaming(false);
            setName("");
          }}
        >
          <input
            aria-label="Name of the saved filter"
            placeholder="name"
            value={name}
            maxLength={60}
            autoFocus
            onChange={(e) => {
              setName(e.target.value);
            }}
          />
          <button type="submit" disabled={!name.trim()}>
            Save
          </button>
        </form>
      ) : (
        <button
          type="button"
          className="ghost"
          disabled={empty}
          title={empty ? "Set a filter first" : "Keep these filters under a name"}
          onClick={() => {
            setNaming(true);
          }}
        >
          Save filters
        </button>
      )}
    </div>
  );
}
