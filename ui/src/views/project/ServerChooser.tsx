import { useId, useState } from "react";
import { Icon } from "../../components/Icon";
import type { ProjectInfo } from "../../platform";
import { failureText, useOpenProject, useProjects } from "./useProjects";

/**
 * Sign in to a team's `jig serve`: the address, then the person's own browser signs them in
 * with the team's provider and asks them to allow the app; the app waits meanwhile and can be
 * told to stop waiting. Servers signed in to before are a click away.
 */
export function ServerChooser({ info, onOpened }: { info: ProjectInfo; onOpened?: () => void }) {
  const projects = useProjects();
  const open = useOpenProject();
  const [address, setAddress] = useState("");
  const inputId = useId();
  const hintId = useId();
  const connect = (server: string) => {
    open.mutate(
      { server },
      {
        onSuccess: (opened) => {
          if (opened) onOpened?.();
        },
      },
    );
  };
  const waiting = open.isPending && open.variables !== null && typeof open.variables === "object";
  const failed = open.error && typeof open.variables === "object" && open.variables !== null;
  return (
    <section className="server-chooser" aria-labelledby={`${inputId}-heading`}>
      <h3 id={`${inputId}-heading`}>Team server</h3>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (address.trim()) connect(address.trim());
        }}
      >
        <label htmlFor={inputId} className="visually-hidden">
          Team server address
        </label>
        <input
          id={inputId}
          type="text"
          inputMode="url"
          autoComplete="url"
          spellCheck={false}
          placeholder="https://jig.example.com"
          aria-describedby={hintId}
          value={address}
          disabled={open.isPending}
          onChange={(e) => {
            setAddress(e.target.value);
          }}
        />
        <button type="submit" disabled={open.isPending || !address.trim()}>
          <Icon name="signin" /> Sign in
        </button>
      </form>
      <p id={hintId} className="muted">
        Your browser opens to sign you in with your organisation&rsquo;s account; the app gets a
        session of its own, which ends when you sign out here.
      </p>
      {waiting && (
        <div className="row" role="status">
          <span>Finish signing in in your browser…</span>
          <button
            type="button"
            className="ghost"
            onClick={() => {
              projects?.cancelConnect();
            }}
          >
            Cancel
          </button>
        </div>
      )}
      {failed && (
        <div className="chooser-failure" role="alert">
          <strong>Not signed in.</strong>
          <pre>{failureText(open.error)}</pre>
        </div>
      )}
      {info.servers.length > 0 && (
        <ul className="recent" aria-label="Team servers">
          {info.servers.map((server) => (
            <li key={server}>
              <button
                type="button"
                className="ghost"
                disabled={open.isPending}
                aria-current={server === info.server ? "true" : undefined}
                aria-label={`Sign in to ${server}`}
                onClick={() => {
                  connect(server);
                }}
              >
                <Icon name="server" />
                <span className="recent-name mono">{server.replace(/^https?:\/\//, "")}</span>
                {server === info.server && <span className="badge">open</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
