import { count } from "../lib/format";

/** A collapsible JSON tree: objects and arrays fold (native details/summary, keyboard included). */
export function JsonTree({ value, label }: { value: unknown; label?: string }) {
  return (
    <div className="json-tree mono" aria-label={label}>
      <Node value={value} name={undefined} depth={0} />
    </div>
  );
}

function Node({ value, name, depth }: { value: unknown; name: string | undefined; depth: number }) {
  const key = name === undefined ? null : <span className="json-key">{name}: </span>;
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? (value as unknown[]).map((v, i) => [String(i), v] as const)
      : Object.entries(value as Record<string, unknown>);
    const open = Array.isArray(value) ? "[" : "{";
    const close = Array.isArray(value) ? "]" : "}";
    if (entries.length === 0)
      return (
        <div>
          {key}
          {open}
          {close}
        </div>
      );
    return (
      <details open={depth < 2}>
        <summary>
          {key}
          {open}
          <span className="muted">
            {" "}
            {count(entries.length, Array.isArray(value) ? "item" : "key")}{" "}
          </span>
          {close}
        </summary>
        <div className="json-children">
          {entries.map(([k, v]) => (
            <Node key={k} name={k} value={v} depth={depth + 1} />
          ))}
        </div>
      </details>
    );
  }
  return (
    <div>
      {key}
      <span className={`json-${value === null ? "null" : typeof value}`}>
        {JSON.stringify(value)}
      </span>
    </div>
  );
}
