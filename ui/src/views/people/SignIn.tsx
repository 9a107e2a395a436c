import type { ReactNode } from "react";
import { useSession } from "../../api/queries";
import { signedOut } from "../../api/session";
import { Failure } from "../../components/Failure";
import { useSignInStatus } from "./usePeople";

/**
 * The workbench for whoever the server knows; the sign-in page for a browser it does not (no
 * session, or one that ended: signed out elsewhere, expired, or its role taken away).
 */
export function SignInGate({ children }: { children: ReactNode }) {
  const session = useSession();
  if (signedOut(session.error)) return <SignIn />;
  return children;
}

function SignIn() {
  const status = useSignInStatus(true);
  // Back to where the person was, view included (a path of this server only: the server
  // checks it again).
  const back = window.location.pathname + window.location.hash;
  const login = `/auth/login?return_to=${encodeURIComponent(back)}`;
  return (
    <main className="welcome" id="main">
      <h1>
        <img src="./icon.svg" alt="" width={28} height={28} /> Sign in to Jig
      </h1>
      {status.error && <Failure error={status.error} />}
      {status.data?.sign_in && (
        <>
          <p>
            This workbench signs people in with your organisation&rsquo;s account. What you may do
            here (run tools, approve calls, or only look) follows the groups that account is in.
          </p>
          <p>
            <a className="button primary" href={login}>
              Sign in with {providerName(status.data.provider)}
            </a>
          </p>
        </>
      )}
      {status.data && !status.data.sign_in && (
        <p>
          This workbench needs a token. Open the link <code>jig serve</code> printed when it
          started, or ask whoever runs it for one of the <code>--users</code> file&rsquo;s links.
        </p>
      )}
      <p className="muted">
        Scripts and agents use a personal token instead: sign in, then make one under your name.
      </p>
    </main>
  );
}

/** The provider as people know it: its host. */
function providerName(issuer: string | null): string {
  if (!issuer) return "your provider";
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
}
