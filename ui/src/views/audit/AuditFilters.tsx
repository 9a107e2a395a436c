import { useEffect, useState } from "react";
import type { RunFilters } from "../../api/queries";

/** Every state a call can be in, what people look for first. */
const states = [
  "succeeded",
  "failed",
  "denied",
  "pending_approval",
  "approved",
  "expired",
  "withdrawn",
  "cancelled",
  "running",
  "queued",
  "created",
];

/** The filters that match a field exactly. */
const exact = [
  { key: "tool", label: "Tool", placeholder: "tool", size: 14 },
  { key: "principal", label: "Principal", placeholder: "who", size: 10 },
  { key: "session", label: "Session", placeholder: "session", size: 10 },
] as const;

/** The time range's two ends. */
const bounds = [
  { key: "since_us", word: "from", label: "From", title: "Runs from this time on; empty for any" },
  { key: "until_us", word: "to", label: "To", title: "Runs up to this time; empty for any" },
] as const;

/** A time (µs) as a `datetime-local` value, in the person's zone; "" for none. */
function localInput(us: number | undefined): string {
  if (us === undefined) return "";
  const date = new Date(us / 1000);
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/**
 * Text, tool, state, person, session and time range; text applies as you pause typing. Mounted
 * afresh (a new `key`) when the filters are replaced from outside, as a saved filter is.
 */
export function AuditFilters({
  filters,
  onChange,
}: {
  filters: RunFilters;
  onChange: (f: RunFilters) => void;
}) {
  const [text, setText] = useState(filters.q ?? "");
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((filters.q ?? "") !== text) onChange({ ...filters, q: text });
    }, 200);
    return () => {
      clearTimeout(timer);
    };
  }, [text, filters, onChange]);
  const set = (key: keyof RunFilters, value: string | number | undefined) => {
    onChange({ ...filters, [key]: value === "" ? undefined : value });
  };
  const toUs = (value: string) => (value ? new Date(value).getTime() * 1000 : undefined);
  return (
    <form
      className="row audit-filters"
      role="search"
      aria-label="Filter runs"
      onSubmit={(e) => {
        e.preventDefault();
      }}
    >
      <input
        type="search"
        data-search
        aria-label="Search runs"
        placeholder="Search ids, tools, people, rules, errors, arguments"
        value={text}
        onChange={(e) => {
          setText(e.target.value);
        }}
        className="grow"
      />
      {exact.map(({ key, label, placeholder, size }) => (
        <input
          key={key}
          aria-label={label}
          placeholder={placeholder}
          value={filters[key] ?? ""}
          onChange={(e) => {
            set(key, e.target.value);
          }}
          size={size}
        />
      ))}
      <select
        aria-label="State"
        value={filters.state ?? ""}
        onChange={(e) => {
          set("state", e.target.value);
        }}
      >
        <option value="">any state</option>
        {states.map((s) => (
          <option key={s} value={s}>
            {s.replace("_", " ")}
          </option>
        ))}
      </select>
      <div className="row" role="group" aria-label="Time range">
        {bounds.map(({ key, word, label, title }) => (
          <label className="row" key={key}>
            {word}
            <input
              type="datetime-local"
              aria-label={label}
              className={filters[key] === undefined ? "unset" : undefined}
              title={title}
              defaultValue={localInput(filters[key])}
              onChange={(e) => {
                set(key, toUs(e.target.value));
              }}
            />
          </label>
        ))}
      </div>
    </form>
  );
}
