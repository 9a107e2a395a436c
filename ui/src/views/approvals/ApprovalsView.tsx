import { useState } from "react";
import type { ApprovalRecord } from "../../api/client";
import { useApprovals, useDecide, useSession } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { formatTime } from "../../lib/format";
import { href } from "../../lib/route";
import { WhatRuns, type ApprovalRequest } from "./WhatRuns";

/** The queue: each pending call with its full arguments and the rule that asked; decide in your name. */
export default function ApprovalsView() {
  const [all, setAll] = useState(false);
  const approvals = useApprovals(all);
  const session = useSession();
  const list = approvals.data ?? [];
  return (
    <div className="page">
      <header className="page-head">
        <h1>Approvals</h1>
        <span className="sub">
          Calls the policy holds for a person. Approving runs exactly the request shown, in the name
          of who asked.
        </span>
        <span className="grow" />
        <label className="row">
          <input
            type="checkbox"
            checked={all}
            onChange={(e) => {
              setAll(e.target.checked);
            }}
          />
          Show decided ones too
        </label>
      </header>
      {approvals.error && <Failure error={approvals.error} />}
      {approvals.data && list.length === 0 && (
        <EmptyState title={all ? "No approvals yet" : "Nothing waits for you"}>
          <p>
            When a call meets a rule whose action is <code>require-approval</code> (the example's
            policy asks for every <code>write</code> or <code>exec</code>), it waits here with its
            exact arguments. Approve it and it runs; deny it and its caller hears why.
          </p>
        </EmptyState>
      )}
      <ul className="approval-list" aria-label="Approvals">
        {list.map((approval) => (
          <Approval
            key={approval.id}
            approval={approval}
            me={session.data?.person.name}
            role={session.data?.person.role}
          />
        ))}
      </ul>
    </div>
  );
}

function Approval({
  approval,
  me,
  role,
}: {
  approval: ApprovalRecord;
  me: string | undefined;
  role: string | undefined;
}) {
  const decide = useDecide();
  const pending = approval.state === "pending";
  const canDecide = role === "approver" || role === "admin";
  const request = approval.request as ApprovalRequest | null;
  // Several approvers: whether I am one already, and whether mine completes the approval.
  const mine = me !== undefined && approval.approvers.includes(me);
  const lastNeeded = approval.approvers.length + 1 >= approval.required;
  return (
    <li className="card approval" aria-label={`Approval ${approval.id} for ${approval.tool}`}>
      <div className="row">
        <a href={href("tools", approval.tool)} className="mono">
          <strong>{approval.tool}</strong>
        </a>
        <span className={`badge ${pending ? "warn" : approval.state === "denied" ? "bad" : "ok"}`}>
          {approval.state}
        </span>
        <span className="muted">
          asked by <strong>{approval.principal ?? "unknown"}</strong>
          {approval.principal === me && " (you)"} · {formatTime(approval.created_us)}
        </span>
        <span className="grow" />
        <code className="muted">{approval.id}</code>
      </div>
      <div>
        Rule <code>{approval.rule}</code>: {approval.reason}
      </div>
      <JsonTree value={request?.args ?? approval.request} label="Arguments" />
      <WhatRuns request={request} />
      {approval.required > 1 && (
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
      )}
      {approval.decided_by && (
        <div className="muted">
          {approval.state} by <strong>{approval.decided_by}</strong>
          {approval.decided_us ? ` · ${formatTime(approval.decided_us)}` : ""}
        </div>
      )}
      {pending && (
        <div className="row">
          <button
            type="button"
            className="primary"
            disabled={!canDecide || decide.isPending || mine}
            onClick={() => {
              decide.mutate({ id: approval.id, verdict: "approve" });
            }}
          >
            {lastNeeded ? "Approve and run" : "Approve"}
          </button>
          <button
            type="button"
            className="danger"
            disabled={!canDecide || decide.isPending}
            onClick={() => {
              decide.mutate({ id: approval.id, verdict: "deny" });
            }}
          >
            Deny
          </button>
          {!canDecide && <span className="muted">Your role ({role}) cannot decide approvals.</span>}
          {canDecide && mine && (
            <span className="muted">You have approved; it waits for another person.</span>
          )}
        </div>
      )}
      {decide.error && <Failure error={decide.error} />}
    </li>
  );
}
