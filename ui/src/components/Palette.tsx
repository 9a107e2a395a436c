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
import { Icon } from "./Icon";
import { rankEntries, type Entry } from "./paletteEntries";

/** How many of the latest runbook runs and calls the palette offers. */
const RECENT = 15;

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

  const choose = (entry: Entry) => {
    // Closed first, so focus is back in the page before the entry moves it (`/` search).
    dialog.current?.close();
    onOpenChange(false);
    setSearch("");
    setActive(0);
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
      onClose={() => {
        setSearch("");
        setActive(0);
        onOpenChange(false);
      }}
      // A click on the backdrop lands on the dialog itself: it closes, as Escape does.
      onClick={(e) => {
        if (e.target === e.currentTarget) dialog.current?.close();
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
        {groups.map((group) => (
          <div key={group.name} role="group" aria-labelledby={`${id}-g-${group.name}`}>
            <div className="palette-heading" id={`${id}-g-${group.name}`} aria-hidden>
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
  for (const tool of tools.data ?? []) {
    out.push(
      entry(
        "Tools",
        `tool-${tool.id}`,
        `tool:${tool.id}`,
        <>
          <Icon name="tools" /> <span className="mono">{tool.id}</span>
          <span className="muted palette-desc">{tool.description}</span>
        </>,
        () => {
          navigate("tools", tool.id);
        },
        [tool.description],
      ),
    );
  }
  for (const book of runbooks.data ?? []) {
    out.push(
      entry(
        "Runbooks",
        `runbook-${book.name}`,
        `runbook:${book.name}`,
        <>
          <Icon name="runbooks" /> <span className="mono">{book.name}</span>
          <span className="muted palette-desc">{book.description}</span>
        </>,
        () => {
          navigate("runbooks", "book", book.name);
        },
        [book.description ?? ""],
      ),
    );
  }
  for (const r of (runbookRuns.data ?? []).slice(0, RECENT)) {
    out.push(
      entry(
        "Recent runbook runs",
        `rr-${r.id}`,
        `runbook-run:${r.id}`,
        <>
          <Icon name="runbooks" /> <span className="mono">{r.runbook}</span>{" "}
          <span className="mono muted">{r.id.slice(0, 8)}</span>
          <span className="muted palette-desc">
            {r.status} · {r.started_by ?? "–"} · {formatShortTime(r.created_us)}
          </span>
        </>,
        () => {
          navigate("runbooks", "run", r.id);
        },
        [r.runbook, r.status, r.started_by ?? ""],
      ),
    );
  }
  for (const call of (calls.data?.pages[0]?.runs ?? []).slice(0, RECENT)) {
    out.push(
      entry(
        "Recent calls",
        `call-${call.request_id}`,
        `call:${call.request_id}`,
        <>
          <Icon name="audit" /> <span className="mono">{call.tool}</span>{" "}
          <span className="mono muted">{call.request_id.slice(0, 8)}</span>
          <span className="muted palette-desc">
            {call.state.replace("_", " ")} · {call.principal ?? "–"} ·{" "}
            {formatShortTime(call.created_us)}
          </span>
        </>,
        () => {
          navigate("audit", call.request_id);
        },
        [call.tool, call.state, call.principal ?? ""],
      ),
    );
  }
  return out;
}
