import { isMe } from "../../lib/people";
import { useState } from "react";
import type { Preview, StepAction, Waiting } from "../../api/client";
import { useActOnRun, useApprovals } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { VerdictBadge } from "../../components/Verdict";
import { EvidenceForm } from "./EvidenceForm";
import { Markdown } from "../../components/Markdown";

/** Who is looking, for what they may do. */
export interface Viewer {
  name: string | undefined;
  role: string | undefined;
}

const mayApprove = (role: string | undefined) => role === "approver" || role === "admin";
const mayRun = (role: string | undefined) => role !== undefined && role !== "viewer";

/**
 * A step waiting for people: what it is (instructions, or the tool with its inputs exactly as
 * they will be sent, its contract and the policy's verdict) and what they can do about it.
 */
export function WaitingCard({
  runId,
  waiting,
  verdict,
  viewer,
  startedBy,
  pausedBy,
}: {
  runId: string;
  waiting: Waiting;
  verdict: Preview | undefined;
  viewer: Viewer;
  startedBy: string | null | undefined;
  /** Who holds the run, when it is paused. */
  pausedBy?: string | null;
}) {
  const act = useActOnRun(runId);
  const send = (action: StepAction) => {
    act.mutate({ key: waiting.key, action });
  };
  const title = waiting.title ?? waiting.step_id;
  return (
    <section className="card waiting" aria-label={`Step ${title}`}>
      <div className="row">
        <span className={`step-kind ${waiting.step_type}`}>{waiting.step_type}</span>
        <h2>{title}</h2>
        {waiting.key !== waiting.step_id && <code className="muted">{waiting.key}</code>}
      </div>
      {waiting.instructions && <Markdown className="instructions" text={waiting.instructions} />}
      {waiting.tool && (
        <div className="will-call">
          <div>
            Will call <strong className="mono">{waiting.tool}</strong> with:
          </div>
          <JsonTree value={waiting.inputs ?? {}} label="Inputs as they will be sent" />
        </div>
      )}
      {waiting.contract && (
        <div className="row" aria-label="Contract">
          <span className={`badge ${waiting.contract.side_effects ? "warn" : "ok"}`}>
            {waiting.contract.side_effects ? "side effects" : "no side effects"}
          </span>
          {(waiting.contract.effects ?? []).map((effect) => (
            <span key={effect} className="badge">
              {effect}
            </span>
          ))}
          {waiting.contract.idempotent && <span className="badge">idempotent</span>}
          {waiting.contract.deterministic && <span className="badge">deterministic</span>}
          {waiting.contract.writes.length > 0 && (
            <span className="muted">writes {waiting.contract.writes.join(", ")}</span>
          )}
        </div>
      )}
      {verdict?.decision && (
        <div className="row" aria-label="Policy verdict">
          Policy: <VerdictBadge action={verdict.decision.action} />
          <code>{verdict.decision.rule}</code>
          <span className="muted">{verdict.decision.reason}</span>
        </div>
      )}
      <Need
        waiting={waiting}
        viewer={viewer}
        startedBy={startedBy}
        pausedBy={pausedBy}
        selfApproval={verdict?.self_approval}
        busy={act.isPending}
        send={send}
      />
      {act.error && <Failure error={act.error} />}
    </section>
  );
}

function Need({
  waiting,
  viewer,
  startedBy,
  pausedBy,
  selfApproval,
  busy,
  send,
}: {
  waiting: Waiting;
  viewer: Viewer;
  startedBy: string | null | undefined;
  pausedBy: string | null | undefined;
  selfApproval: boolean | null | undefined;
  busy: boolean;
  send: (action: StepAction) => void;
}) {
  const need = waiting.need;
  const runner = mayRun(viewer.role);
  const roleNote = !runner && (
    <p className="muted">Your role ({viewer.role}) may look but not act.</p>
  );
  switch (need.need) {
    case "evidence":
      return (
        <>
          <EvidenceForm
            required={need.required}
            disabled={!runner || busy}
            onSubmit={(values) => {
              send({ action: "evidence", values });
            }}
          />
          {roleNote}
        </>
      );
    case "choice":
      return <ChoiceForm need={need} disabled={!runner || busy} send={send} />;
    case "approval": {
      const own = startedBy !== undefined && startedBy === viewer.name && selfApproval === false;
      const allowed = mayApprove(viewer.role) && !own;
      return (
        <div className="need">
          <p>
            The policy holds this call for a person (<code>{need.rule}</code>). Approving runs
            exactly the call shown above.
          </p>
          <Approvers approvalId={need.approval_id} me={viewer.name} />
          <div className="row">
            <button
              type="button"
              className="primary"
              disabled={!allowed || busy}
              onClick={() => {
                send({ action: "approve" });
              }}
            >
              Approve and run
            </button>
            <button
              type="button"
              className="danger"
              disabled={!allowed || busy}
              onClick={() => {
                send({ action: "deny" });
              }}
            >
              Deny
            </button>
          </div>
          {own && (
            <p className="muted">You started this run; someone else must approve its calls.</p>
          )}
          {!own && !mayApprove(viewer.role) && (
            <p className="muted">Your role ({viewer.role}) cannot approve; an approver can.</p>
          )}
        </div>
      );
    }
    case "failed":
      return (
        <div className="need">
          <div className="callout bad">
            <strong className="mono">{need.failure.kind}</strong> {need.failure.message}
          </div>
          <div className="row">
            <button
              type="button"
              disabled={!runner || busy}
              onClick={() => {
                send({ action: "retry" });
              }}
            >
              Retry the step
            </button>
            <button
              type="button"
              className="danger"
              disabled={!runner || busy}
              onClick={() => {
                send({ action: "abort" });
              }}
            >
              Accept the failure
            </button>
          </div>
          {roleNote}
        </div>
      );
    default:
      return (
        <GoForm
          reason={need.need === "go" ? need.reason : "paused"}
          required={need.need === "go" ? (need.required ?? 1) : 1}
          approvedBy={need.need === "go" ? (need.approved_by ?? []) : []}
          me={viewer.name}
          pausedBy={pausedBy}
          disabled={!runner || busy}
          send={send}
        />
      );
  }
}

function GoForm({
  reason,
  required,
  approvedBy,
  me,
  pausedBy,
  disabled,
  send,
}: {
  reason: string;
  required: number;
  approvedBy: string[];
  me: string | undefined;
  pausedBy: string | null | undefined;
  disabled: boolean;
  send: (action: StepAction) => void;
}) {
  const [why, setWhy] = useState("");
  const already = me !== undefined && approvedBy.includes(me);
  return (
    <div className="need">
      {reason !== "stepwise" && reason !== "paused" && (
        <p>
          The runbook's governance (<code>{reason}</code>) asks a person before this step.
        </p>
      )}
      {required > 1 && (
        <p role="status" aria-label="Go-aheads">
          Needs <strong>{required}</strong> go-aheads from different people:{" "}
          {approvedBy.length === 0
            ? "none yet"
            : approvedBy.map((who) => (who === me ? `${who} (you)` : who)).join(", ")}{" "}
          <span className="muted">
            ({approvedBy.length} of {required})
          </span>
        </p>
      )}
      {reason === "paused" && (
        <p>
          {pausedBy ? isMe(pausedBy, me) ? "You" : <strong>{pausedBy}</strong> : "Someone"} paused
          the run here: nothing new happens until a person resumes it.
        </p>
      )}
      {already && <p className="muted">You have said go; someone else must too.</p>}
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={disabled || already}
          onClick={() => {
            send({ action: "run" });
          }}
        >
          {reason === "paused" ? "Resume here" : "Run this step"}
        </button>
        <input
          aria-label="Why skip it"
          placeholder="Why skip it?"
          value={why}
          onChange={(e) => {
            setWhy(e.target.value);
          }}
        />
        <button
          type="button"
          disabled={disabled || why.trim() === ""}
          onClick={() => {
            send({ action: "skip", reason: why.trim() });
          }}
        >
          Skip
        </button>
      </div>
    </div>
  );
}

function ChoiceForm({
  need,
  disabled,
  send,
}: {
  need: Extract<Waiting["need"], { need: "choice" }>;
  disabled: boolean;
  send: (action: StepAction) => void;
}) {
  const [value, setValue] = useState<string | null>(null);
  return (
    <fieldset className="need">
      <legend>{need.prompt ?? "Choose one"}</legend>
      {need.options.map((option) => (
        <label key={option.value} className="choice">
          <input
            type="radio"
            name="choice"
            value={option.value}
            checked={value === option.value}
            onChange={() => {
              setValue(option.value);
            }}
          />
          <span>
            <strong>{option.label ?? option.value}</strong>
            {option.description && <span className="muted"> — {option.description}</span>}
          </span>
        </label>
      ))}
      <button
        type="button"
        className="primary"
        disabled={disabled || value === null}
        onClick={() => {
          if (value !== null) send({ action: "choose", value });
        }}
      >
        Choose
      </button>
    </fieldset>
  );
}

/** Who has approved so far, when the rule asks several people (`min_approvers`). */
function Approvers({ approvalId, me }: { approvalId: string; me: string | undefined }) {
  const pending = useApprovals(false);
  const approval = pending.data?.find((a) => a.id === approvalId);
  if (!approval || approval.required < 2) return null;
  const names = approval.approvers.map((who) => (who === me ? `${who} (you)` : who));
  return (
    <p role="status" aria-label="Approvers">
      Needs <strong>{approval.required}</strong> different approvers:{" "}
      {names.length === 0 ? "none yet" : names.join(", ")}{" "}
      <span className="muted">
        ({approval.approvers.length} of {approval.required})
      </span>
    </p>
  );
}
