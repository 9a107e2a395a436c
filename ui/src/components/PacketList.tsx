import type { ReactNode } from "react";
import type { Packet } from "../api/client";
import { formatTime } from "../lib/format";
import { JsonTree } from "./JsonTree";

/**
 * Packets of the chain, each opening its data: `#seq`, what it records (`title`), when, and
 * whatever `detail` adds (a hash, who acted).
 */
export function PacketList({
  packets,
  title,
  detail,
}: {
  packets: readonly Packet[];
  title: (packet: Packet) => string;
  detail: (packet: Packet) => ReactNode;
}) {
  return (
    <ol className="packets">
      {packets.map((p) => (
        <li key={p.seq}>
          <details>
            <summary>
              <span className="mono">#{p.seq}</span> <strong>{title(p)}</strong>{" "}
              <span className="muted">{formatTime(p.ts_us)}</span> {detail(p)}
            </summary>
            <JsonTree value={p.data} label={`Packet ${p.seq}`} />
          </details>
        </li>
      ))}
    </ol>
  );
}
