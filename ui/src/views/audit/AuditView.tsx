import { lazy, Suspense, useCallback, useState } from "react";
import type { RunFilters } from "../../api/queries";
import { navigate } from "../../lib/route";
import { AuditFilters } from "./AuditFilters";
import { ChainBar } from "./ChainBar";
import { ExportButtons } from "./ExportButtons";
import { Timeline } from "./Timeline";

const RunDetailPane = lazy(() => import("./RunDetailPane"));
const RunDiff = lazy(() => import("./RunDiff"));

/** Filters a link asked for (`#/audit?session=RUN`: a runbook run's calls). */
function linkedFilters(): RunFilters {
  const query = new URLSearchParams(window.location.hash.split("?")[1] ?? "");
  const session = query.get("session");
  return session ? { session } : {};
}

/** The record: a virtualized timeline of runs with filters, one run's detail, two runs' diff. */
export default function AuditView({ rest }: { rest: string[] }) {
  const [filters, setFilters] = useState<RunFilters>(linkedFilters);
  const [marked, setMarked] = useState<string[]>([]);
  // Stable, so the timeline's memoized rows do not all redraw on every change.
  const toggleMark = useCallback((id: string) => {
    setMarked((current) =>
      current.includes(id) ? current.filter((x) => x !== id) : [...current, id].slice(-2),
    );
  }, []);
  if (rest[0] === "diff" && rest[1] && rest[2])
    return (
      <Suspense fallback={null}>
        <RunDiff left={rest[1]} right={rest[2]} />
      </Suspense>
    );
  const selected = rest[0];
  return (
    <div className="audit">
      <div className="audit-head">
        <div className="page-head">
          <h1>Audit</h1>
          <span className="sub">Every call: request, decision, result, in one hash chain.</span>
          <ChainBar />
          <span className="grow" />
          <ExportButtons filters={filters} />
          <button
            type="button"
            disabled={marked.length !== 2}
            onClick={() => {
              const [a, b] = marked;
              if (a && b) navigate("audit", "diff", a, b);
            }}
            title="Mark two runs with their checkboxes, then compare them"
          >
            Compare {marked.length}/2 marked
          </button>
        </div>
        <AuditFilters filters={filters} onChange={setFilters} />
      </div>
      <div className={selected ? "audit-body with-detail" : "audit-body"}>
        <Timeline filters={filters} selected={selected} marked={marked} onToggleMark={toggleMark} />
        {selected && (
          <Suspense fallback={null}>
            <RunDetailPane id={selected} />
          </Suspense>
        )}
      </div>
    </div>
  );
}
