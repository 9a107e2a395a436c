import type { ApprovalRecord } from "../../api/client";
import { personOf } from "../../lib/people";

/** An approval, and the pending ones that ask exactly the same again (newest last). */
export interface Grouped {
  approval: ApprovalRecord;
  repeats: ApprovalRecord[];
}

/**
 * Pending requests of one person for the same tool with the same arguments, together: a
 * second click, a retry from another tab, an agent asking again. A reviewer decides them once.
 * Decided approvals stay one each (each has its own outcome).
 */
export function groupRepeats(list: ApprovalRecord[]): Grouped[] {
  const groups = new Map<string, Grouped>();
  const out: Grouped[] = [];
  for (const approval of list) {
    const key = approval.state === "pending" ? repeatKey(approval) : `id:${approval.id}`;
    const group = groups.get(key);
    if (group) {
      group.repeats.push(approval);
    } else {
      const made = { approval, repeats: [] };
      groups.set(key, made);
      out.push(made);
    }
  }
  return out;
}

/**
 * For each pending group, the other pending groups asking the same tool with the same
 * arguments, whoever asked (several people, or several agents, wanting the same thing): a
 * reviewer may pick them all and decide them with one note.
 */
export function alike(groups: Grouped[]): Map<string, string[]> {
  const byRequest = new Map<string, string[]>();
  for (const { approval } of groups) {
    if (approval.state !== "pending") continue;
    const key = requestKey(approval);
    byRequest.set(key, [...(byRequest.get(key) ?? []), approval.id]);
  }
  const out = new Map<string, string[]>();
  for (const ids of byRequest.values()) {
    for (const id of ids)
      out.set(
        id,
        ids.filter((other) => other !== id),
      );
  }
  return out;
}

function repeatKey(approval: ApprovalRecord): string {
  return JSON.stringify([personOf(approval.principal ?? ""), requestKey(approval)]);
}

function requestKey(approval: ApprovalRecord): string {
  const request = approval.request as { args?: unknown } | null;
  return JSON.stringify([approval.tool, request?.args ?? approval.request]);
}
