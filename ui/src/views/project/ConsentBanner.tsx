import { Inline } from "../../components/Inline";

/** One thing the manifest names that waits for a person's consent (`/api/session`). */
export interface Waiting {
  kind: string;
  name: string;
  target: string;
  description: string;
}

/**
 * What the project's manifest would send off this machine (the audit to a receiver, notices
 * to a webhook, sign-in through a provider) and waits for consent: said where the person
 * sees it, with the one way to give it. A cloned repository's manifest chooses these; nothing
 * of them happens until its person runs `jig trust`.
 */
export function ConsentBanner({ waiting }: { waiting: Waiting[] | undefined }) {
  // Undefined from a team server older than this field.
  if (!waiting?.length) return null;
  const names = waiting.map((w) => `${w.kind} ${w.name}`).join(", ");
  return (
    <section className="callout warn consent-banner" aria-label="Waiting for your consent">
      <details>
        <summary>
          <strong>Waiting for your consent:</strong> {names}. None of{" "}
          {waiting.length === 1 ? "it" : "them"} takes effect until you read{" "}
          {waiting.length === 1 ? "it" : "them"} and run <code>jig trust</code> in the project.
        </summary>
        <ul>
          {waiting.map((w) => (
            <li key={`${w.kind}:${w.name}`}>
              <Inline text={w.description} />
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
