import type { ApprovalRecord } from "../../api/client";
import { isMe } from "../../lib/people";

/**
 * Pending, mine to decide and not yet approved by me: asked by someone else, or by me (or an
 * agent acting for me) when the policy lets people approve their own.
 */
export function waitsFor(
  a: ApprovalRecord,
  me: string | undefined,
  decider: boolean,
  own: boolean,
): boolean {
  return (
    decider &&
    a.state === "pending" &&
    (own || !isMe(a.principal, me)) &&
    (me === undefined || !a.approvers.includes(me))
  );
}
