import { useDeferredValue, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { ToolSummary } from "../../api/client";
import { VerdictBadge } from "../../components/Verdict";
import { href, navigate } from "../../lib/route";
import { Filters } from "./Filters";
import { facets, noFilters, rows, searchTools, toolIndex, type ToolFilters } from "./search";
import { Inline } from "../../components/Inline";

/** The searchable, filterable, virtualized tool list; arrows move, Enter opens. */
export function ToolList({
  tools,
  selected,
}: {
  tools: ToolSummary[] | undefined;
  selected: string | undefined;
}) {
  const all = useMemo(() => tools ?? [], [tools]);
  const index = useMemo(() => toolIndex(all), [all]);
  const options = useMemo(() => facets(all), [all]);
  const [text, setText] = useState("");
  const [filters, setFilters] = useState<ToolFilters>(noFilters);
  const query = useDeferredValue(text);
  const found = useMemo(
    () => searchTools(all, index, query, filters),
    [all, index, query, filters],
  );
  const list = useMemo(() => rows(found, query.trim() === ""), [found, query]);
  const [cursor, setCursor] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: list.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => (list[i]?.kind === "package" ? 30 : 52),
    overscan: 12,
  });

  const toolRows = list.flatMap((row, i) => (row.kind === "tool" ? [i] : []));
  const active = Math.min(cursor, Math.max(toolRows.length - 1, 0));
  const activeRow = toolRows[active];
  const activeTool = activeRow === undefined ? undefined : list[activeRow];

  const move = (delta: number) => {
    const next = Math.max(0, Math.min(toolRows.length - 1, active + delta));
    setCursor(next);
    const row = toolRows[next];
    if (row !== undefined) virtual.scrollToIndex(row, { align: "auto" });
  };

  const onKey = (event: KeyboardEvent) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      move(1);
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      move(-1);
    } else if (event.key === "Enter" && activeTool?.kind === "tool") {
      event.preventDefault();
      navigate("tools", activeTool.tool.id);
    } else if (event.key === "Escape" && text !== "") {
      setText("");
    }
  };

  const activeId = activeTool?.kind === "tool" ? `tool-${activeTool.tool.id}` : undefined;

  return (
    <div className="tool-list" onKeyDown={onKey}>
      <div className="tool-search">
        <input
          type="search"
          data-search
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setCursor(0);
          }}
          placeholder={`Search ${all.length} tools`}
          aria-label="Search tools"
          aria-controls="tool-listbox"
          aria-activedescendant={activeId}
          role="combobox"
          aria-expanded="true"
          aria-autocomplete="list"
        />
        <Filters options={options} filters={filters} onChange={setFilters} />
        <div className="muted count-line" aria-live="polite">
          {found.length === all.length
            ? `${all.length} tools`
            : `${found.length} of ${all.length} tools`}
        </div>
      </div>
      <div ref={scroller} className="tool-scroller" tabIndex={0} aria-label="Tool list, scrollable">
        {found.length === 0 && tools !== undefined ? (
          <p className="muted" style={{ padding: "12px" }}>
            No tool matches. Clear the search (<kbd>Esc</kbd>) or the filters.
          </p>
        ) : (
          <div
            id="tool-listbox"
            role="listbox"
            aria-label="Tools"
            style={{ height: virtual.getTotalSize(), position: "relative" }}
          >
            {virtual.getVirtualItems().map((item) => {
              const row = list[item.index];
              if (!row) return null;
              const style = {
                position: "absolute" as const,
                top: 0,
                left: 0,
                right: 0,
                transform: `translateY(${item.start}px)`,
              };
              if (row.kind === "package")
                return (
                  <div
                    key={`p-${row.name}`}
                    role="presentation"
                    className="package-row"
                    style={style}
                  >
                    {row.name} <span className="muted">{row.count}</span>
                  </div>
                );
              const tool = row.tool;
              const isActive = item.index === activeRow;
              return (
                <a
                  key={tool.id}
                  id={`tool-${tool.id}`}
                  role="option"
                  aria-selected={tool.id === selected}
                  data-active={isActive || undefined}
                  href={href("tools", tool.id)}
                  className="tool-row"
                  style={style}
                  tabIndex={-1}
                >
                  <span className="row">
                    <span className="mono tool-id">{tool.id}</span>
                    <span className="grow" />
                    <VerdictBadge action={tool.verdict.action} />
                  </span>
                  <span className="muted tool-desc">
                    <Inline text={tool.description} />
                  </span>
                </a>
              );
            })}
          </div>
        )}
      </div>
    </div>
  );
}
