import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import type { RunFilters } from "../../api/queries";
import { writeHashQuery } from "../../lib/hashQuery";
import { navigate } from "../../lib/route";
import { AuditFilters } from "./AuditFilters";
import { ChainBar } from "./ChainBar";
import { ExportButtons } from "./ExportButtons";
import { SavedFilters } from "./SavedFilters";
import { Timeline } from "./Timeline";
import { filtersFromUrl, filtersToUrl } from "./urlFilters";

const RunDetailPane = lazy(() => import("./RunDetailPane"));
const RunDiff = lazy(() => import("./RunDiff"));

/** The record: a virtualized timeline of runs with filters, one run's detail, two runs' diff. */
export default function AuditView({ rest }: { rest: string[] }) {
  // The filters are in the URL (`#/audit?state=denied`): a link opens the same timeline, and
  // opening a run keeps them there.
  const [filters, setFilters] = useState<RunFilters>(() => filtersFromUrl());
  // Bumped when the filters are replaced whole (a saved filter picked): the fields remount.
  const [picked, setPicked] = useState(0);
  useEffect(() => {
    writeHashQuery(filtersToUrl(filters));
  }, [filters, rest]);
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
          <SavedFilters
            filters={filters}
            onPick={(chosen) => {
              setFilters(chosen);
              setPicked((n) => n + 1);
            }}
          />
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
        <AuditFilters key={picked} filters={filters} onChange={setFilters} />
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
