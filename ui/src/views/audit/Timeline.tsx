import { memo, useEffect, useMemo, useRef } from "react";
import type { RunRecord } from "../../api/client";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useRuns, type RunFilters } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { StateBadge } from "../../components/Verdict";
import { count, formatDuration, formatShortTime, formatTime, shortId } from "../../lib/format";
import { href, navigate } from "../../lib/route";

const ROW = 36;

/** Runs, newest first, loaded page by page as you scroll; only the rows on screen are drawn. */
export function Timeline({
  filters,
  selected,
  marked,
  onToggleMark,
}: {
  filters: RunFilters;
  selected: string | undefined;
  marked: string[];
  onToggleMark: (id: string) => void;
}) {
  const runs = useRuns(filters);
  const rows = useMemo(() => runs.data?.pages.flatMap((page) => page.runs) ?? [], [runs.data]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 20,
  });
  const items = virtual.getVirtualItems();
  const last = items[items.length - 1]?.index ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = runs;

  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && last >= rows.length - 40) void fetchNextPage();
  }, [last, rows.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  if (runs.error) return <Failure error={runs.error} />;
  const filtered = Object.values(filters).some((v) => v !== undefined && v !== "");
  if (runs.data && rows.length === 0)
    return filtered ? (
      <EmptyState title="No run matches">
        <p>
          Loosen the filters: the search covers ids, tools, people, sessions, rules, errors and
          arguments.
        </p>
      </EmptyState>
    ) : (
      <EmptyState title="No runs yet">
        <p>
          Every call made here, from the CLI or by an agent lands in this timeline with its request,
          the policy's decision and its result. Run a tool from <a href={href("tools")}>Tools</a> to
          see the first.
        </p>
      </EmptyState>
    );

  const onKey = (event: React.KeyboardEvent) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    event.preventDefault();
    const at = rows.findIndex((r) => r.request_id === selected);
    const next = Math.max(0, Math.min(rows.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)));
    const run = rows[next];
    if (run) {
      navigate("audit", run.request_id);
      virtual.scrollToIndex(next, { align: "auto" });
    }
  };

  return (
    <div className="timeline">
      <div
        className="timeline-table"
        role="table"
        aria-label="Runs"
        aria-rowcount={rows.length + 1}
        aria-busy={runs.isPlaceholderData}
      >
        <div role="rowgroup">
          <div role="row" className="timeline-row timeline-header">
            <span role="columnheader">
              <span className="visually-hidden">Mark</span>
            </span>
            <span role="columnheader">When</span>
            <span role="columnheader">Tool</span>
            <span role="columnheader">State</span>
            <span role="columnheader">Who</span>
            <span role="columnheader" className="col-rule">
              Rule
            </span>
            <span role="columnheader">Took</span>
            <span role="columnheader" className="col-request">
              Request
            </span>
          </div>
        </div>
        <div
          ref={scroller}
          className="timeline-scroller"
          role="rowgroup"
          tabIndex={0}
          onKeyDown={onKey}
          aria-label="Runs, newest first; arrow keys move"
        >
          <div role="presentation" style={{ height: virtual.getTotalSize(), position: "relative" }}>
            {items.map((item) => {
              const run = rows[item.index];
              if (!run) return null;
              return (
                <TimelineRow
                  key={run.request_id}
                  run={run}
                  index={item.index}
                  start={item.start}
                  selected={run.request_id === selected}
                  marked={marked.includes(run.request_id)}
                  onToggleMark={onToggleMark}
                />
              );
            })}
          </div>
        </div>
      </div>
      <div className="muted timeline-foot" aria-live="polite">
        {count(rows.length, "run")} loaded
        {runs.hasNextPage ? ", more as you scroll" : ""}
      </div>
    </div>
  );
}

/** One row; memoized, so a scroll draws only the rows that came into view. */
const TimelineRow = memo(function TimelineRow({
  run,
  index,
  start,
  selected,
  marked,
  onToggleMark,
}: {
  run: RunRecord;
  index: number;
  start: number;
  selected: boolean;
  marked: boolean;
  onToggleMark: (id: string) => void;
}) {
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      className="timeline-row"
      style={{
        position: "absolute",
        top: 0,
        left: 0,
        right: 0,
        height: ROW,
        transform: `translateY(${start}px)`,
      }}
    >
      <span role="cell">
        <input
          type="checkbox"
          checked={marked}
          aria-label={`Mark run ${shortId(run.request_id)} to compare`}
          onChange={() => {
            onToggleMark(run.request_id);
          }}
        />
      </span>
      <span role="cell" className="muted" title={formatTime(run.created_us)}>
        {formatShortTime(run.created_us)}
      </span>
      <span role="cell" className="mono ellipsis">
        <a href={href("audit", run.request_id)}>{run.tool}</a>
      </span>
      <span role="cell">
        {run.resumed_as && (
          <span
            className="badge ok"
            title={`approved by a person; ran as ${run.resumed_as}, which ${run.state}`}
          >
            approved
          </span>
        )}
        <StateBadge state={run.state} />
        {run.replayed_from && (
          <span className="badge" title={`replayed ${run.replayed_from}`}>
            replay
          </span>
        )}
      </span>
      <span role="cell" className="ellipsis">
        {run.principal ?? "–"}
      </span>
      <span role="cell" className="mono ellipsis muted col-rule">
        {run.rule ?? ""}
      </span>
      <span role="cell" className="muted">
        {formatDuration(run.duration_ms)}
      </span>
      <span role="cell" className="mono muted col-request">
        {shortId(run.request_id)}
      </span>
    </div>
  );
});
