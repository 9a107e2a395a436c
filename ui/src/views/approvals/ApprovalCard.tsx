import { useEffect, useId, useState } from "react";
import type { ApprovalRecord } from "../../api/client";
import { useDecide } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { formatTime } from "../../lib/format";
import { isMe } from "../../lib/people";
import { href } from "../../lib/route";
import { DecisionNote } from "./DecisionNote";
import { WhatRuns, type ApprovalRequest } from "./WhatRuns";
import { Inline } from "../../components/Inline";

/**
 * An approval as the person signed in (`me`, with `role`) sees it; `selfApproval`: whether the
 * policy lets them approve what they (or their agents) asked.
 */
interface Viewed {
  approval: ApprovalRecord;
  me: string | undefined;
  role: string | undefined;
  selfApproval: boolean;
  /** Pending approvals asking exactly the same (decided together with this one). */
  repeats?: ApprovalRecord[];
  /** Picking it for one decision with others, when the reviewer may decide it. */
  pick?: Pick;
}

/** A card's place in the reviewer's selection. */
interface Pick {
  on: boolean;
  set: (on: boolean) => void;
  /** Other pending approvals asking the same of the same tool, from other people. */
  alike: string[];
  /** Select this one and those alike. */
  setAlike: () => void;
}

/** One approval: what runs, who asked and why it waits, and — for a decider — the decision. */
export function ApprovalCard({ approval, me, role, selfApproval, repeats = [], pick }: Viewed) {
  const pending = approval.state === "pending";
  const request = approval.request as ApprovalRequest | null;
  return (
    <li className="card approval" aria-label={`Approval ${approval.id} for ${approval.tool}`}>
      <div className="row">
        {pick && (
          <input
            type="checkbox"
            className="pick"
            checked={pick.on}
            aria-label={`Select ${approval.tool} asked by ${approval.principal ?? "unknown"} (${approval.id.slice(0, 8)})`}
            onChange={(e) => {
              pick.set(e.target.checked);
            }}
          />
        )}
        <a href={href("tools", approval.tool)} className="mono">
          <strong>{approval.tool}</strong>
        </a>
        <span className={`badge ${stateTone(approval.state)}`}>{approval.state}</span>
        <span className="muted">
          asked by <strong>{approval.principal ?? "unknown"}</strong>
          {approval.principal === me
            ? " (you)"
            : isMe(approval.principal, me) && " (your agent)"} · {formatTime(approval.created_us)}
        </span>
        {pending && approval.expires_us != null && <ExpiresIn us={approval.expires_us} />}
        <span className="grow" />
        <code className="muted">{approval.id}</code>
      </div>
      <div>
        Rule <code>{approval.rule}</code>: <Inline text={approval.reason} />
      </div>
      <JsonTree value={request?.args ?? approval.request} label="Arguments" />
      <WhatRuns request={request} />
      {repeats.length > 0 && (
        <p className="repeats" role="note">
          <span className="badge warn">×{repeats.length + 1}</span> Asked {repeats.length + 1}{" "}
          times, the same request each time ({repeats.map((r) => r.id.slice(0, 8)).join(", ")}).
          Approving runs it once and ends the repeats; denying denies them all.
        </p>
      )}
      {pick && pick.alike.length > 0 && (
        <p className="alike" role="note">
          {pick.alike.length} other {pick.alike.length === 1 ? "person asks" : "people ask"} the
          same of <code>{approval.tool}</code>.{" "}
          <button type="button" className="link" onClick={pick.setAlike}>
            Select all {pick.alike.length + 1}
          </button>
        </p>
      )}
      {approval.required > 1 && <Approvers approval={approval} me={me} />}
      {approval.decided_by && (
        <div className="decided" role="note">
          <span className="muted">
            {approval.state} by <strong>{approval.decided_by}</strong>
            {approval.decided_us ? ` · ${formatTime(approval.decided_us)}` : ""}
          </span>
          {approval.note && <blockquote className="note">{approval.note}</blockquote>}
        </div>
      )}
      {pending && (
        <Decide
          approval={approval}
          me={me}
          role={role}
          selfApproval={selfApproval}
          repeats={repeats}
        />
      )}
    </li>
  );
}

function stateTone(state: string): string {
  if (state === "pending") return "warn";
  if (state === "denied" || state === "expired") return "bad";
  if (state === "withdrawn") return "";
  return "ok";
}

/** Several approvers: who has, and how many more. */
function Approvers({ approval, me }: { approval: ApprovalRecord; me: string | undefined }) {
  return (
    <div role="status" aria-label="Approvers">
      Needs <strong>{approval.required}</strong> different approvers:{" "}
      {approval.approvers.length === 0
        ? "none yet"
        : approval.approvers.map((who, i) => (
            <span key={who}>
              {i > 0 && ", "}
              <strong>{who}</strong>
              {who === me && " (you)"}
            </span>
          ))}{" "}
      <span className="muted">
        ({approval.approvers.length} of {approval.required})
      </span>
    </div>
  );
}

/**
 * The decision: approve runs the request (a note is optional), deny needs a reason — it is what
 * the asker reads, and writing it is the confirmation.
 */
function Decide({ approval, me, role, selfApproval, repeats = [] }: Viewed) {
  const decide = useDecide();
  const noteId = useId();
  const [note, setNote] = useState("");
  const [wantReason, setWantReason] = useState(false);
  const canDecide = role === "approver" || role === "admin";
  const mine = me !== undefined && approval.approvers.includes(me);
  const refused = !selfApproval && isMe(approval.principal, me);
  const lastNeeded = approval.approvers.length + 1 >= approval.required;
  if (!canDecide) {
    return <p className="muted">Your role ({role}) cannot decide approvals.</p>;
  }
  const asker = approval.principal ?? "who asked";
  return (
    <form
      className="decide"
      onSubmit={(event) => {
        event.preventDefault();
      }}
    >
      <DecisionNote
        id={noteId}
        label={
          <>
            Note for {asker} <span className="muted">(optional to approve, needed to deny)</span>
          </>
        }
        note={note}
        setNote={setNote}
        missing={wantReason && !note.trim()}
        why={`Say why you deny it: ${asker} reads this.`}
      />
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={decide.isPending || mine || refused}
          onClick={() => {
            decide.mutate({
              id: approval.id,
              verdict: "approve",
              note: note.trim() || undefined,
              // Ended only once this approval is complete (the last approver needed).
              repeats: lastNeeded ? repeats.map((r) => r.id) : [],
            });
          }}
        >
          {lastNeeded ? "Approve and run" : "Approve"}
        </button>
        <button
          type="button"
          className="danger"
          disabled={decide.isPending}
          onClick={() => {
            if (!note.trim()) {
              setWantReason(true);
              document.getElementById(noteId)?.focus();
              return;
            }
            decide.mutate({
              id: approval.id,
              verdict: "deny",
              note: note.trim(),
              repeats: repeats.map((r) => r.id),
            });
          }}
        >
          Deny
        </button>
        {mine && <span className="muted">You have approved; it waits for another person.</span>}
        {refused && !mine && (
          <span className="muted">You asked for this one: someone else approves it.</span>
        )}
      </div>
      {decide.error && <Failure error={decide.error} />}
    </form>
  );
}

/** How long a pending request has before it expires, counting down. */
function ExpiresIn({ us }: { us: number }) {
  const now = useNow(15_000);
  const left = Math.max(0, us / 1000 - now);
  const minutes = Math.floor(left / 60_000);
  const text =
    left <= 0
      ? "expiring"
      : minutes >= 60
        ? `expires in ${Math.floor(minutes / 60)} h ${minutes % 60} min`
        : minutes >= 1
          ? `expires in ${minutes} min`
          : "expires in under a minute";
  return (
    <span
      className={`badge ${minutes < 2 ? "bad" : minutes < 10 ? "warn" : ""}`}
      title={`Nobody decided by ${formatTime(us)}: it expires`}
    >
      {text}
    </span>
  );
}

/** The time now, in ms, refreshed every `every` ms. */
function useNow(every: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => {
      setNow(Date.now());
    }, every);
    return () => {
      clearInterval(timer);
    };
  }, [every]);
  return now;
}
