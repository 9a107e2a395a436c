import { ApiFailure } from "../api/client";

/** An error as a callout: its code and sentence. */
export function Failure({ error }: { error: unknown }) {
  const code = error instanceof ApiFailure ? error.code : "E_INTERNAL";
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="callout bad" role="alert">
      <strong className="mono">{code}</strong> {message}
    </div>
  );
}
