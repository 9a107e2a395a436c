import { useRunbookTrace } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { formatDuration, formatShortTime } from "../../lib/format";
import { href } from "../../lib/route";

/** The run's trace as the audit chain has it: each event, its step and who it is attributed to. */
export function RunTrace({ id }: { id: string }) {
  const trace = useRunbookTrace(id);
  const all = trace.data ?? [];
  // Seals tie journal rows to the chain; people read the events.
  const packets = all.filter((packet) => (packet.data as { event?: string }).event !== undefined);
  const began = all[0]?.ts_us;
  return (
    <details className="card">
      <summary>
        Trace ({packets.length} events; {all.length} packets in the audit chain)
      </summary>
      {trace.error && <Failure error={trace.error} />}
      <table className="trace-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">When</th>
            <th scope="col">Event</th>
            <th scope="col">Step</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {packets.map((packet) => {
            const data = packet.data as { event: string; action?: { action?: string } };
            const event =
              data.event === "person" ? `person: ${data.action?.action ?? "acted"}` : data.event;
            return (
              <tr key={packet.seq}>
                <td className="mono">{packet.seq}</td>
                <td className="mono" title={formatShortTime(packet.ts_us)}>
                  {began === undefined ? "" : `+${formatDuration((packet.ts_us - began) / 1000)}`}
                </td>
                <td className="mono">{event}</td>
                <td className="mono">{packet.thread_id ?? ""}</td>
                <td>{packet.principal ?? ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="muted">
        <a href={`${href("audit")}?session=${encodeURIComponent(id)}`}>
          See its steps' tool calls in the Audit view
        </a>{" "}
        (session <code>{id.slice(0, 8)}</code>).
      </p>
    </details>
  );
}
