import { useVerify } from "../../api/queries";

/** The chain's head and a Verify button that says what it checked. */
export function ChainBar() {
  const verify = useVerify();
  const status = verify.data;
  return (
    <div className="row chain-bar">
      <button
        type="button"
        onClick={() => {
          verify.mutate();
        }}
        disabled={verify.isPending}
      >
        {verify.isPending ? "Verifying…" : "Verify the chain"}
      </button>
      <span role="status" aria-live="polite" className="grow">
        {status?.status === "ok" && (
          <span>
            <span className="badge ok">intact</span> head #{status.head.seq}{" "}
            <code title={status.head.hash}>{status.head.hash.slice(0, 16)}</code> ·{" "}
            {status.checked.join(" ")}
          </span>
        )}
        {status?.status === "broken" && (
          <span>
            <span className="badge bad">broken</span> {status.at ? `at packet #${status.at}: ` : ""}
            {status.reason} ({status.verified} packets verified before it)
          </span>
        )}
        {verify.error && <span className="badge bad">{String(verify.error)}</span>}
      </span>
    </div>
  );
}
