import { useState } from "react";
import type { ApprovalRecord } from "../../api/client";
import { useApprovals, useSession } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { isMe } from "../../lib/people";
import { ApprovalCard } from "./ApprovalCard";
import { BulkDecide } from "./BulkDecide";
import { alike, groupRepeats } from "./repeats";
import { waitsFor } from "./waiting";

/** Which approvals the queue shows. */
type Show = "mine" | "asked" | "pending" | "decided";

const LABELS: Record<Show, string> = {
  mine: "Waiting for me",
  asked: "Asked by me",
  pending: "All pending",
  decided: "Decided",
};

/**
 * The queue: each pending call with its full arguments and the rule that asked; decide in your
 * name. It opens on what waits for you (a decider) or what you asked (everyone else).
 */
export default function ApprovalsView() {
  const session = useSession();
  const me = session.data?.person.name;
  const role = session.data?.person.role;
  const decider = role === "approver" || role === "admin";
  const own = session.data?.self_approval ?? false;
  const [chosen, setChosen] = useState<Show | undefined>();
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const show: Show = chosen ?? (decider ? "mine" : "asked");
  const approvals = useApprovals(show === "asked" || show === "decided");
  const all = approvals.data ?? [];
  const counts = {
    mine: all.filter((a) => waitsFor(a, me, decider, own)).length,
    asked: all.filter((a) => isMe(a.principal, me)).length,
    pending: all.filter((a) => a.state === "pending").length,
    decided: all.filter((a) => a.state !== "pending").length,
  };
  const list = all.filter((a) => matches(show, a, me, decider, own));
  const shown = (["mine", "asked", "pending", "decided"] as const).filter(
    (s) => s !== "mine" || decider,
  );
  const groups = groupRepeats(list);
  const links = alike(groups);
  // What this person may decide here; a selection keeps only those still listed.
  const pickable = groups.filter((g) => waitsFor(g.approval, me, decider, own));
  const pickableIds = new Set(pickable.map((g) => g.approval.id));
  const chosenGroups = pickable.filter((g) => picked.has(g.approval.id));
  const pick = (ids: string[], on: boolean) => {
    setPicked((was) => {
      const next = new Set(was);
      for (const id of ids) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });
  };
  return (
    <div className="page">
      <header className="page-head">
        <h1>Approvals</h1>
        <span className="sub">
          Calls the policy holds for a person. Approving runs exactly the request shown, in the name
          of who asked.
        </span>
        <span className="grow" />
        <div className="segmented" role="radiogroup" aria-label="Show">
          {shown.map((s) => (
            <button
              key={s}
              type="button"
              role="radio"
              aria-checked={show === s}
              onClick={() => {
                setChosen(s);
                setPicked(new Set());
              }}
            >
              {LABELS[s]}
              {approvals.data && <span className="count-inline">{countOf(s, counts, show)}</span>}
            </button>
          ))}
        </div>
      </header>
      {approvals.error && <Failure error={approvals.error} />}
      {approvals.data && list.length === 0 && <Empty show={show} />}
      {pickable.length > 1 && (
        <label className="pick-all">
          <input
            type="checkbox"
            checked={chosenGroups.length === pickable.length}
            ref={(box) => {
              if (box) {
                box.indeterminate =
                  chosenGroups.length > 0 && chosenGroups.length < pickable.length;
              }
            }}
            onChange={(e) => {
              pick(
                pickable.map((g) => g.approval.id),
                e.target.checked,
              );
            }}
          />
          Select all {pickable.length} you can decide
        </label>
      )}
      <ul className="approval-list" aria-label="Approvals">
        {groups.map(({ approval, repeats }) => {
          const canPick = pickableIds.has(approval.id);
          const same = (links.get(approval.id) ?? []).filter((id) => pickableIds.has(id));
          return (
            <ApprovalCard
              key={approval.id}
              approval={approval}
              repeats={repeats}
              me={me}
              role={role}
              selfApproval={own}
              pick={
                canPick
                  ? {
                      on: picked.has(approval.id),
                      set: (on) => {
                        pick([approval.id], on);
                      },
                      alike: same,
                      setAlike: () => {
                        pick([approval.id, ...same], true);
                      },
                    }
                  : undefined
              }
            />
          );
        })}
      </ul>
      {decider && (
        <BulkDecide
          picked={chosenGroups.map((g) => ({
            id: g.approval.id,
            repeats: g.repeats.map((r) => r.id),
          }))}
          onDone={() => {
            setPicked(new Set());
          }}
        />
      )}
    </div>
  );
}

/** A count shown only where the list it counts is loaded (decided ones load on demand). */
function countOf(s: Show, counts: Record<Show, number>, show: Show): string {
  const loadedAll = show === "asked" || show === "decided";
  if ((s === "asked" || s === "decided") && !loadedAll) return "";
  return ` ${counts[s]}`;
}

function matches(
  show: Show,
  a: ApprovalRecord,
  me: string | undefined,
  decider: boolean,
  own: boolean,
) {
  switch (show) {
    case "mine":
      return waitsFor(a, me, decider, own);
    case "asked":
      return isMe(a.principal, me);
    case "pending":
      return a.state === "pending";
    case "decided":
      return a.state !== "pending";
  }
}

function Empty({ show }: { show: Show }) {
  switch (show) {
    case "mine":
      return (
        <EmptyState title="Nothing waits for you">
          <p>
            When someone&rsquo;s call meets a rule whose action is <code>require-approval</code>{" "}
            (the example&rsquo;s policy asks for every <code>write</code> or <code>exec</code>), it
            waits here with its exact arguments, and the workbench tells you it arrived. Approve it
            and it runs in their name; deny it and they read your reason.
          </p>
        </EmptyState>
      );
    case "asked":
      return (
        <EmptyState title="You have asked for nothing">
          <p>
            A call of yours that needs a reviewer waits here, with what became of it: approved and
            run, denied with the reviewer&rsquo;s reason, or expired.
          </p>
        </EmptyState>
      );
    case "pending":
      return (
        <EmptyState title="Nothing is pending">
          <p>No call waits for a reviewer now.</p>
        </EmptyState>
      );
    case "decided":
      return (
        <EmptyState title="No approvals yet">
          <p>Decided approvals stay here with who decided them and what they wrote.</p>
        </EmptyState>
      );
  }
}
