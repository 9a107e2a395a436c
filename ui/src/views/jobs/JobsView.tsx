import { lazy, Suspense, useEffect, useRef, useState } from "react";
import type { Schemas } from "../../api/client";
import { useJobs } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { StateBadge } from "../../components/Verdict";
import { formatDuration, formatShortTime, formatTime, shortId } from "../../lib/format";
import { href, navigate } from "../../lib/route";

const RunDetailPane = lazy(() => import("../audit/RunDetailPane"));

type Job = Schemas["JobSummary"];

/** The clock, ticking each second while `active` (how long open jobs have waited). */
function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      setNow(Date.now());
    }, 1000);
    return () => {
      clearInterval(timer);
    };
  }, [active]);
  return now;
}

/**
 * Calls whose work runs on a scheduler (seed 001's slurm and hybrid plans): where each job
 * stands, live (the engine's watcher polls the scheduler and every change arrives as an
 * event), and, for the one selected, its result, artifacts and log.
 */
export default function JobsView({ rest }: { rest: string[] }) {
  const jobs = useJobs();
  const selected = rest[0];
  const rows = jobs.data ?? [];
  const open = rows.filter((j) => j.open).length;
  const now = useNow(open > 0);

  const onKey = (event: React.KeyboardEvent) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    event.preventDefault();
    const at = rows.findIndex((j) => j.request_id === selected);
    const next = Math.max(0, Math.min(rows.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)));
    const job = rows[next];
    if (job) navigate("jobs", job.request_id);
  };

  return (
    <div className="audit">
      <div className="audit-head">
        <div className="page-head">
          <h1>Jobs</h1>
          <span className="sub">
            Plan runs on a scheduler, followed live until their outputs are collected.
          </span>
          <span className="grow" />
          {jobs.data && (
            <span className="muted" aria-live="polite">
              {open} open · {rows.length - open} collected
            </span>
          )}
        </div>
      </div>
      <div className={selected ? "audit-body with-detail" : "audit-body"}>
        <div className="jobs-list">
          {jobs.error ? (
            <Failure error={jobs.error} />
          ) : !jobs.data ? (
            <div aria-busy="true" />
          ) : rows.length === 0 ? (
            <EmptyState title="No jobs yet">
              <p>
                A tool whose plan runs on Slurm (<code>kind: slurm</code> or <code>hybrid</code> in
                its toolpack) submits a job when it is called, and the call answers at once. The job
                shows here, queued, running, then collected with its outputs and log. Try{" "}
                <a href={href("tools", "acme.latency_report")}>acme.latency_report</a>.
              </p>
              <p className="muted">
                Container plans (<code>kind: docker</code>) run while you wait; their runs and
                artifacts are in <a href={href("audit")}>Audit</a>.
              </p>
            </EmptyState>
          ) : (
            <table className="grid jobs-table" aria-label="Jobs, newest first; arrow keys move">
              <thead>
                <tr>
                  <th scope="col">Submitted</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Job</th>
                  <th scope="col">State</th>
                  <th scope="col">Took</th>
                  <th scope="col">Who</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody onKeyDown={onKey}>
                {rows.map((job) => (
                  <JobRow
                    key={job.request_id}
                    job={job}
                    now={now}
                    selected={job.request_id === selected}
                  />
                ))}
              </tbody>
            </table>
          )}
        </div>
        {selected && (
          <Suspense fallback={null}>
            <RunDetailPane id={selected} closeTo="jobs" />
          </Suspense>
        )}
      </div>
    </div>
  );
}

function JobRow({ job, now, selected }: { job: Job; now: number; selected: boolean }) {
  const waited = now - job.created_us / 1000;
  const link = useRef<HTMLAnchorElement>(null);
  // Arrow keys move the selection: keep the focus on the selected row's link.
  useEffect(() => {
    if (selected && link.current?.closest("tbody")?.contains(document.activeElement))
      link.current.focus();
  }, [selected]);
  return (
    <tr aria-selected={selected}>
      <td className="muted" title={formatTime(job.created_us)}>
        {formatShortTime(job.created_us)}
      </td>
      <td className="mono">
        <a
          ref={link}
          href={href("jobs", job.request_id)}
          aria-current={selected ? "true" : undefined}
        >
          {job.tool}
        </a>
      </td>
      <td className="mono">
        {job.engine} {job.handle}
      </td>
      <td>
        <StateBadge state={job.state} />
      </td>
      <td className="muted">
        {job.open
          ? `${formatDuration(Math.max(0, waited))} so far`
          : formatDuration(job.duration_ms)}
      </td>
      <td>{job.principal ?? "–"}</td>
      <td className="mono muted">{shortId(job.request_id)}</td>
    </tr>
  );
}
