import {
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type ReactNode,
} from "react";
import { useRunbookRuns, useRunbooks, useRuns, useTools } from "../api/queries";
import { formatShortTime } from "../lib/format";
import { paletteScore } from "../lib/match";
import { places } from "../lib/places";
import { chords } from "../lib/shortcuts";
import { navigate } from "../lib/route";
import type { ThemeChoice } from "../lib/theme";
import { useOpenProject, useProjectInfo } from "../views/project/useProjects";
import { baseName } from "../views/project/ProjectChooser";
import { Icon, type IconName } from "./Icon";
import { rankEntries, type Entry } from "./paletteEntries";

/** How many of the latest runbook runs and calls the palette offers. */
const RECENT = 15;

/**
 * Moves focus out of the dialog. A dialog opened while nothing on the page had focus has
 * nothing to give it back to, and leaves it on its hidden input until its `close` event, a
 * task later: a `g` typed in between went into the input and `g a` went nowhere. So focus
 * leaves before the dialog closes, on every way out.
 */
function letGo(dialog: HTMLDialogElement | null): void {
  const focused = document.activeElement;
  if (focused instanceof HTMLElement && dialog?.contains(focused)) focused.blur();
}

/**
 * Ctrl/⌘+K (or `?`): go anywhere, open any tool or runbook, a recent run or call, change the
 * theme; every entry shows its key. Typed words match names and descriptions by words, never
 * by scattered letters (lib/match.ts).
 *
 * A modal `<dialog>`: the browser keeps focus inside, makes the page behind it inert, closes it
 * on Escape and gives focus back to where it was. The input is a combobox over a listbox of
 * grouped options (the ARIA pattern): arrows, Home and End move, Enter chooses, the pointer too.
 */
export function Palette({
  open,
  onOpenChange,
  theme,
  setTheme,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  theme: ThemeChoice;
  setTheme: (theme: ThemeChoice) => void;
}) {
  const entries = usePaletteEntries(theme, setTheme);
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [search, setSearch] = useState("");
  const [active, setActive] = useState(0);
  const id = useId();

  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) {
      el.showModal();
      input.current?.focus();
    } else if (!open && el.open) {
      letGo(el);
      el.close();
    }
  }, [open]);

  const groups = useMemo(() => rankEntries(entries, search, paletteScore), [entries, search]);
  const shown = groups.flatMap((g) => g.entries);
  const current = shown[Math.min(active, shown.length - 1)];

  useEffect(() => {
    if (current)
      document.getElementById(`${id}-${current.key}`)?.scrollIntoView({ block: "nearest" });
  }, [current, id]);

  const close = () => {
    letGo(dialog.current);
    dialog.current?.close();
  };

  const choose = (entry: Entry) => {
    // Closed first (which gives focus back to the page at once; its `close` event resets the
    // palette), so the entry can move focus itself (`/` search).
    close();
    entry.onSelect();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const last = shown.length - 1;
    const moves: Record<string, number> = {
      ArrowDown: Math.min(active + 1, last),
      ArrowUp: Math.max(active - 1, 0),
      Home: 0,
      End: last,
      PageDown: Math.min(active + 8, last),
      PageUp: Math.max(active - 8, 0),
    };
    const to = moves[e.key];
    if (to !== undefined && last >= 0) {
      e.preventDefault();
      setActive(to);
    } else if (e.key === "Enter" && current) {
      e.preventDefault();
      choose(current);
    }
  };

  return (
    <dialog
      ref={dialog}
      className="palette"
      aria-label="Command palette"
      // Escape: `cancel` comes before the dialog closes, at once.
      onCancel={() => {
        letGo(dialog.current);
      }}
      onClose={() => {
        setSearch("");
        setActive(0);
        onOpenChange(false);
      }}
      // A click on the backdrop lands on the dialog itself: it closes, as Escape does.
      onClick={(e) => {
        if (e.target === e.currentTarget) close();
      }}
    >
      <input
        ref={input}
        className="palette-input"
        role="combobox"
        aria-label="Command"
        aria-expanded="true"
        aria-controls={`${id}-list`}
        aria-autocomplete="list"
        aria-activedescendant={current ? `${id}-${current.key}` : undefined}
        placeholder="Go to a view, open a tool, run a command…"
        value={search}
        onChange={(e) => {
          setSearch(e.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
        autoComplete="off"
        spellCheck={false}
      />
      <div className="palette-list" role="listbox" id={`${id}-list`} aria-label="Commands">
        {shown.length === 0 && <div className="palette-empty">Nothing matches.</div>}
        {groups.map((group, g) => (
          // By position: a group's name has spaces, which an id reference cannot hold.
          <div key={group.name} role="group" aria-labelledby={`${id}-g${g}`}>
            <div className="palette-heading" id={`${id}-g${g}`} aria-hidden>
              {group.name}
            </div>
            {group.entries.map((entry) => (
              <div
                key={entry.key}
                id={`${id}-${entry.key}`}
                role="option"
                aria-selected={entry === current}
                className="palette-item"
                onPointerMove={() => {
                  if (entry !== current) setActive(shown.indexOf(entry));
                }}
                onClick={() => {
                  choose(entry);
                }}
              >
                {entry.body}
              </div>
            ))}
          </div>
        ))}
      </div>
    </dialog>
  );
}

/** Everything the palette offers, in the order it offers them before anything is typed. */
function usePaletteEntries(theme: ThemeChoice, setTheme: (t: ThemeChoice) => void): Entry[] {
  const tools = useTools();
  const runbooks = useRunbooks();
  const runbookRuns = useRunbookRuns();
  const calls = useRuns({}, RECENT);
  const projects = useProjectInfo();
  const openProject = useOpenProject();
  const keyOf = (place: string) => Object.entries(chords).find(([, p]) => p === place)?.[0];
  const entry = (
    group: string,
    key: string,
    value: string,
    body: ReactNode,
    onSelect: () => void,
    keywords: string[] = [],
  ): Entry => ({ group, key, value, keywords, body, onSelect });

  const out: Entry[] = places.map((p) =>
    entry(
      "Views",
      `view-${p.id}`,
      `view:${p.label}`,
      <>
        <Icon name={p.icon} /> {p.label}
        <span className="grow" />
        <kbd>g {keyOf(p.id)}</kbd>
      </>,
      () => {
        navigate(p.id);
      },
    ),
  );
  const info = projects.data;
  if (info) {
    out.push(
      entry(
        "Projects",
        "project-open",
        "project:open project folder",
        <>
          <Icon name="folder" /> Open a project folder…
        </>,
        () => {
          openProject.mutate(null);
        },
      ),
      entry(
        "Projects",
        "project-example",
        "project:open example project",
        <>
          <Icon name="tools" /> Open the example project
        </>,
        () => {
          openProject.mutate({ example: true });
        },
      ),
      ...info.recent
        .filter((path) => path !== info.path)
        .map((path, i) =>
          entry(
            "Projects",
            `project-${i}`,
            `project:open ${path}`,
            <>
              <Icon name="folder" /> Open {baseName(path)}
              <span className="grow" />
              <span className="muted mono">{path}</span>
            </>,
            () => {
              openProject.mutate(path);
            },
          ),
        ),
    );
  }
  for (const choice of ["system", "light", "dark"] as const) {
    out.push(
      entry(
        "Commands",
        `theme-${choice}`,
        `command:theme ${choice}`,
        <>
          <Icon name={choice === "light" ? "sun" : "moon"} /> Theme: {choice}
          {theme === choice && <span className="badge">current</span>}
        </>,
        () => {
          setTheme(choice);
        },
      ),
    );
  }
  out.push(
    entry(
      "Commands",
      "verify",
      "command:verify audit chain",
      <>
        <Icon name="check" /> Verify the audit chain (in Audit)
      </>,
      () => {
        navigate("audit");
      },
    ),
    entry(
      "Commands",
      "search",
      "command:search in this view",
      <>
        <Icon name="search" /> Search in this view
        <span className="grow" />
        <kbd>/</kbd>
      </>,
      () => document.querySelector<HTMLInputElement>("[data-search]")?.focus(),
    ),
  );
  /** A thing with a name and a description (a tool, a runbook). */
  const named = (
    group: string,
    kind: string,
    icon: IconName,
    name: string,
    description: string,
    go: () => void,
  ) =>
    entry(
      group,
      `${kind}-${name}`,
      `${kind}:${name}`,
      <>
        <Icon name={icon} /> <span className="mono">{name}</span>
        <span className="muted palette-desc">{description}</span>
      </>,
      go,
      [description],
    );
  /** Something that happened: what ran, its short id, its state, who and when. */
  const recent = (
    group: string,
    kind: string,
    icon: IconName,
    what: string,
    id: string,
    state: string,
    who: string | null | undefined,
    at: number,
    go: () => void,
  ) =>
    entry(
      group,
      `${kind}-${id}`,
      `${kind}:${id}`,
      <>
        <Icon name={icon} /> <span className="mono">{what}</span>{" "}
        <span className="mono muted">{id.slice(0, 8)}</span>
        <span className="muted palette-desc">
          {state} · {who ?? "–"} · {formatShortTime(at)}
        </span>
      </>,
      go,
      [what, state, who ?? ""],
    );
  for (const tool of tools.data ?? []) {
    out.push(
      named("Tools", "tool", "tools", tool.id, tool.description, () => {
        navigate("tools", tool.id);
      }),
    );
  }
  for (const book of runbooks.data ?? []) {
    out.push(
      named("Runbooks", "runbook", "runbooks", book.name, book.description ?? "", () => {
        navigate("runbooks", "book", book.name);
      }),
    );
  }
  for (const r of (runbookRuns.data ?? []).slice(0, RECENT)) {
    const go = () => {
      navigate("runbooks", "run", r.id);
    };
    out.push(
      recent(
        "Recent runbook runs",
        "runbook-run",
        "runbooks",
        r.runbook,
        r.id,
        r.status,
        r.started_by,
        r.created_us,
        go,
      ),
    );
  }
  for (const call of (calls.data?.pages[0]?.runs ?? []).slice(0, RECENT)) {
    const go = () => {
      navigate("audit", call.request_id);
    };
    const state = call.state.replace("_", " ");
    out.push(
      recent(
        "Recent calls",
        "call",
        "audit",
        call.tool,
        call.request_id,
        state,
        call.principal,
        call.created_us,
        go,
      ),
    );
  }
  return out;
}
