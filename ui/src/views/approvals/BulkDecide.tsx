import { useId, useState } from "react";
import { useDecideMany, type DecideOutcome, type Picked } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { DecisionNote } from "./DecisionNote";

/**
 * One decision for the approvals a reviewer picked: one note (the reason each asker reads
 * when denied, so it is needed then), then approve or deny them all. What failed (someone
 * else decided it meanwhile) is said by id; the rest are decided.
 */
export function BulkDecide({ picked, onDone }: { picked: Picked[]; onDone: () => void }) {
  const decide = useDecideMany();
  const noteId = useId();
  const [note, setNote] = useState("");
  const [wantReason, setWantReason] = useState(false);
  const [told, setTold] = useState<DecideOutcome[] | null>(null);
  const count = picked.length;
  const repeats = picked.reduce((n, p) => n + p.repeats.length, 0);
  const missing = wantReason && !note.trim();
  const run = (verdict: "approve" | "deny") => {
    if (verdict === "deny" && !note.trim()) {
      setWantReason(true);
      document.getElementById(noteId)?.focus();
      return;
    }
    decide.mutate(
      { picked, verdict, note: note.trim() },
      {
        onSuccess: (outcomes) => {
          setTold(outcomes);
          setNote("");
          setWantReason(false);
          onDone();
        },
      },
    );
  };
  if (count === 0 && !told) return null;
  return (
    <section className="card bulk-decide" aria-label="Decide the selected approvals">
      {count > 0 ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
          }}
        >
          <DecisionNote
            id={noteId}
            label={
              <>
                <strong>{count} selected</strong>
                {repeats > 0 && <span className="muted"> (and {repeats} repeats of them)</span>} ·
                one note for every asker <span className="muted">(needed to deny)</span>
              </>
            }
            note={note}
            setNote={setNote}
            missing={missing}
            why="Say why you deny them: each asker reads this."
          />
          <div className="row">
            <button
              type="button"
              className="primary"
              disabled={decide.isPending}
              onClick={() => {
                run("approve");
              }}
            >
              Approve {count}
            </button>
            <button
              type="button"
              className="danger"
              disabled={decide.isPending}
              onClick={() => {
                run("deny");
              }}
            >
              Deny {count}
            </button>
            <button type="button" className="ghost" onClick={onDone}>
              Clear selection
            </button>
          </div>
          {decide.error && <Failure error={decide.error} />}
        </form>
      ) : (
        told && (
          <div className="row">
            <Told outcomes={told} />
            <span className="grow" />
            <button
              type="button"
              className="ghost"
              onClick={() => {
                setTold(null);
              }}
            >
              Dismiss
            </button>
          </div>
        )
      )}
    </section>
  );
}

/** What the last decision did: how many, and each one that could not be decided, and why. */
export function Told({ outcomes }: { outcomes: DecideOutcome[] }) {
  const failed = outcomes.filter((o) => o.outcome === "error");
  const done = outcomes.length - failed.length;
  const verb = outcomes.some((o) => o.outcome === "denied") ? "Denied" : "Approved";
  return (
    <div role="status">
      {done > 0 && (
        <p>
          {verb} {done} of {outcomes.length}.
        </p>
      )}
      {failed.length > 0 && (
        <ul className="bulk-failed" aria-label="Not decided">
          {failed.map((o) => (
            <li key={o.id}>
              <code>{o.id.slice(0, 8)}</code> {o.code}: {o.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
