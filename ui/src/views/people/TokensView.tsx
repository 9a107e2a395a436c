import { useState } from "react";
import type { Schemas } from "../../api/client";
import { useSession } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { Icon } from "../../components/Icon";
import { formatTime } from "../../lib/format";
import { useMakeToken, useRevokeToken, useTokens } from "./usePeople";

type ApiToken = Schemas["ApiToken"];
type MadeToken = Schemas["MadeToken"];

/** The roles in order, lowest first: a token may have its owner's or any below. */
const ROLES = ["viewer", "runner", "approver", "admin"] as const;

/**
 * Personal API tokens: a script or an agent acts in your name, with at most your role, until
 * you revoke it. A token is shown once, when made.
 */
export default function TokensView() {
  const tokens = useTokens();
  const session = useSession();
  const [made, setMade] = useState<MadeToken | null>(null);
  const list = tokens.data ?? [];
  const live = list.filter((t) => t.revoked_us == null);
  const revoked = list.filter((t) => t.revoked_us != null);
  return (
    <div className="page">
      <header className="page-head">
        <h1>Personal tokens</h1>
        <span className="sub">
          For a script on the API or an agent on <code>/mcp</code>: it sends{" "}
          <code>Authorization: Bearer TOKEN</code> and acts as you, recorded as you.
        </span>
      </header>
      {session.data?.via === "personal_token" ? (
        <div className="callout" role="status">
          You are acting with a personal token: tokens are made by a person signed in, in the
          workbench.
        </div>
      ) : (
        <NewToken role={session.data?.person.role} onMade={setMade} />
      )}
      {made && (
        <Made
          token={made}
          onDone={() => {
            setMade(null);
          }}
        />
      )}
      {tokens.error && <Failure error={tokens.error} />}
      {tokens.data && list.length === 0 && (
        <EmptyState title="No tokens yet">
          <p>
            Make one for each place that acts for you (<em>ci</em>, <em>agent on my laptop</em>), so
            that revoking one stops only that place. A token never does more than you may: when your
            role is lowered, so is every token of yours.
          </p>
        </EmptyState>
      )}
      {live.length > 0 && <TokenTable title="In use" tokens={live} />}
      {revoked.length > 0 && <TokenTable title="Revoked" tokens={revoked} />}
    </div>
  );
}

function NewToken({
  role,
  onMade,
}: {
  role: string | undefined;
  onMade: (token: MadeToken) => void;
}) {
  const make = useMakeToken();
  const [name, setName] = useState("");
  const allowed = ROLES.slice(0, ROLES.indexOf((role ?? "viewer") as (typeof ROLES)[number]) + 1);
  const [chosen, setChosen] = useState<string>("");
  const tokenRole = chosen || role || "viewer";
  return (
    <form
      className="card row token-form"
      aria-label="Make a token"
      onSubmit={(event) => {
        event.preventDefault();
        make.mutate(
          { name: name.trim(), role: tokenRole },
          {
            onSuccess: (token) => {
              setName("");
              onMade(token);
            },
          },
        );
      }}
    >
      <label className="row">
        Name
        <input
          value={name}
          required
          maxLength={100}
          placeholder="ci, agent on my laptop"
          onChange={(e) => {
            setName(e.target.value);
          }}
        />
      </label>
      <label className="row">
        Role
        <select
          value={tokenRole}
          onChange={(e) => {
            setChosen(e.target.value);
          }}
        >
          {allowed.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={make.isPending || !name.trim()}>
        <Icon name="key" /> Make token
      </button>
      {make.error && <Failure error={make.error} />}
    </form>
  );
}

function Made({ token, onDone }: { token: MadeToken; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section className="callout ok made-token" aria-label={`Token ${token.name}`}>
      <p>
        <strong>{token.name}</strong> ({token.role}) is ready. Copy it now: it is not shown again,
        and Jig keeps only its hash.
      </p>
      <div className="row">
        <code className="mono secret" aria-label="The token">
          {token.token}
        </code>
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard.writeText(token.token).then(() => {
              setCopied(true);
            });
          }}
        >
          <Icon name={copied ? "check" : "copy"} /> {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="ghost" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

function TokenTable({ title, tokens }: { title: string; tokens: ApiToken[] }) {
  const revoke = useRevokeToken();
  return (
    <section aria-label={`${title} tokens`}>
      <h2>{title}</h2>
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Made</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id}>
              <td>
                <strong>{token.name}</strong> <code className="muted">{token.id}</code>
              </td>
              <td>
                <span className="badge">{token.role}</span>
              </td>
              <td>{formatTime(token.created_us)}</td>
              <td>{token.last_used_us ? formatTime(token.last_used_us) : "never"}</td>
              <td>
                {token.revoked_us == null ? (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Revoke ${token.name}`}
                    disabled={revoke.isPending}
                    onClick={() => {
                      if (window.confirm(`Revoke ${token.name}? Whatever uses it stops at once.`))
                        revoke.mutate(token.id);
                    }}
                  >
                    Revoke
                  </button>
                ) : (
                  <span className="muted">revoked {formatTime(token.revoked_us)}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {revoke.error && <Failure error={revoke.error} />}
    </section>
  );
}
