import { useEffect, useId, useRef, useState } from "react";
import { useSession } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { Icon } from "../../components/Icon";
import { href } from "../../lib/route";
import { useSignOut } from "./usePeople";

/**
 * Who acts here, and their role. On `jig serve`, a disclosure with what is theirs: personal
 * tokens, and signing out (a browser signed in with the provider).
 */
export function WhoMenu() {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const id = useId();
  const signOut = useSignOut();

  useEffect(() => {
    if (!open) return;
    panel.current?.querySelector<HTMLElement>("a, button")?.focus();
    const close = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!panel.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    return () => {
      document.removeEventListener("mousedown", close);
    };
  }, [open]);

  const data = session.data;
  if (!data) return null;
  const { person } = data;
  const label = `Signed in as ${person.name}, ${person.role}`;
  const who = (
    <>
      <Icon name="user" />
      <strong>{person.name}</strong>
      <span className="badge">{person.role}</span>
    </>
  );
  if (!data.tokens && data.via !== "sign_in") {
    return (
      <span className="who" aria-label={label}>
        {who}
      </span>
    );
  }
  const dismiss = () => {
    setOpen(false);
    button.current?.focus();
  };
  return (
    <span className="who-menu">
      <button
        ref={button}
        type="button"
        className="ghost who"
        aria-label={`${label}. Your tokens and signing out`}
        aria-expanded={open}
        aria-controls={id}
        onClick={() => {
          setOpen(!open);
        }}
      >
        {who}
        <Icon name="chevron" />
      </button>
      {open && (
        <div
          ref={panel}
          id={id}
          className="who-panel card"
          onKeyDown={(event) => {
            if (event.key === "Escape") dismiss();
          }}
        >
          <p className="muted">
            {data.via === "sign_in"
              ? "Signed in with your organisation's account. Your role follows its groups."
              : data.via === "personal_token"
                ? "Acting with a personal token."
                : "Signed in with a link's token."}
          </p>
          {data.tokens && (
            <a
              className="button ghost"
              href={href("tokens")}
              onClick={() => {
                setOpen(false);
              }}
            >
              <Icon name="key" /> Personal tokens
            </a>
          )}
          {data.via === "sign_in" && (
            <button
              type="button"
              className="ghost"
              disabled={signOut.isPending}
              onClick={() => {
                signOut.mutate();
              }}
            >
              <Icon name="signout" /> Sign out
            </button>
          )}
          {signOut.error && <Failure error={signOut.error} />}
        </div>
      )}
    </span>
  );
}
