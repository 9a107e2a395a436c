import { useEffect, useRef } from "react";
import { useJobLog } from "../../api/queries";
import { formatBytes } from "../../lib/format";

/**
 * What a job on a scheduler has printed so far, refreshed while it runs, kept scrolled to the
 * end unless the reader scrolled up. Once collected, the whole log is among the artifacts.
 */
export function JobLogTail({ requestId }: { requestId: string }) {
  const log = useJobLog(requestId);
  const pre = useRef<HTMLPreElement>(null);
  const text = log.data?.text;
  useEffect(() => {
    const element = pre.current;
    if (!element) return;
    const nearEnd = element.scrollHeight - element.scrollTop - element.clientHeight < 48;
    if (nearEnd) element.scrollTop = element.scrollHeight;
  }, [text]);
  if (!log.data) return null;
  return (
    <section aria-label="Output so far" className="job-log">
      <h3>
        Output so far{" "}
        <span className="muted">
          {log.data.size === 0
            ? "(nothing yet)"
            : log.data.truncated
              ? `(the last 64 KiB of ${formatBytes(log.data.size)})`
              : `(${formatBytes(log.data.size)})`}
        </span>
      </h3>
      {log.data.size > 0 && (
        <pre ref={pre} className="output" tabIndex={0} aria-label="The job's output">
          {text}
        </pre>
      )}
    </section>
  );
}
