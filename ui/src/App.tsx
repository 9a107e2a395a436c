import { lazy, Suspense, useEffect, useState } from "react";
import { lazyView } from "./lib/lazyView";
import { markOnce } from "./lib/marks";
import { useConnected } from "./api/context";
import { useApprovals, useProblems, useSession } from "./api/queries";
import { Icon } from "./components/Icon";
import { isMe } from "./lib/people";
import { places } from "./lib/places";
import { href, parseRoute, useRoute } from "./lib/route";
import { useNavWidth } from "./lib/navWidth";
import { useShortcuts } from "./lib/shortcuts";
import { useTheme } from "./lib/theme";
import { Notices } from "./views/people/Notices";
import { WhoMenu } from "./views/people/WhoMenu";
import { waitsFor } from "./views/approvals/waiting";
import { ConsentBanner } from "./views/project/ConsentBanner";
import { ProjectMenu } from "./views/project/ProjectMenu";

/** Each view, in a chunk of its own loaded when first shown. */
const views = {
  tools: lazyView(() => import("./views/tools/ToolsView")),
  approvals: lazyView(() => import("./views/approvals/ApprovalsView")),
  jobs: lazyView(() => import("./views/jobs/JobsView")),
  audit: lazyView(() => import("./views/audit/AuditView")),
  runbooks: lazyView(() => import("./views/runbooks/RunbooksView")),
  problems: lazyView(() => import("./views/problems/ProblemsView")),
  policy: lazyView(() => import("./views/policy/PolicyView")),
  metrics: lazyView(() => import("./views/metrics/MetricsView")),
  tokens: lazyView(() => import("./views/people/TokensView")),
};

/** The view the app opens on: the address's, else the tools. */
export function openingView(): string {
  return parseRoute(window.location.hash)[0] ?? "tools";
}

/**
 * Load the view the app opens on; the first render waits for it (with the platform), so the
 * view draws at once instead of behind a fallback. A chunk that fails to load is left to the
 * view's own loading, which shows the failure.
 */
export function preloadOpeningView(): Promise<unknown> {
  const opening = openingView();
  const view = opening in views ? views[opening as keyof typeof views] : views.tools;
  return view.preload().catch(() => undefined);
}

// The palette loads the first time it opens.
const Palette = lazy(() => import("./components/Palette").then((m) => ({ default: m.Palette })));

export function App() {
  // The first render's start, for the desktop app's log of where a start went.
  markOnce("app-render");
  const { route, changing } = useRoute();
  const place = route[0] ?? "tools";
  const [theme, setTheme] = useTheme();
  const nav = useNavWidth();
  const [paletteOpen, setPaletteOpen] = useState(false);
  // Mounted from its first opening on (closing it keeps its chunk and state).
  const [paletteUsed, setPaletteUsed] = useState(false);
  const showPalette = (open: boolean) => {
    setPaletteOpen(open);
    if (open) setPaletteUsed(true);
  };
  useShortcuts({
    openPalette: () => {
      showPalette(true);
    },
  });

  useEffect(() => {
    const label =
      place === "tokens" ? "Personal tokens" : (places.find((p) => p.id === place)?.label ?? "Jig");
    document.title = `${label} · Jig`;
  }, [place]);

  return (
    <div className={nav.narrow ? "app nav-narrow" : "app"}>
      <header className="topbar">
        <span className="brand">
          <img src="./icon.svg" alt="" width={20} height={20} /> Jig
        </span>
        <ProjectName />
        <span className="spacer" />
        <button
          type="button"
          className="ghost"
          onClick={() => {
            showPalette(true);
          }}
          aria-label="Open the command palette"
          aria-keyshortcuts="Control+K"
        >
          <Icon name="search" /> Search and commands <kbd>Ctrl K</kbd>
        </button>
        <button
          type="button"
          className="ghost"
          aria-label={`Theme: ${theme}. Change theme`}
          title={`Theme: ${theme}`}
          onClick={() => {
            setTheme(theme === "system" ? "dark" : theme === "dark" ? "light" : "system");
          }}
        >
          <Icon name={theme === "light" ? "sun" : "moon"} />
          <span className="muted">{theme}</span>
        </button>
        <WhoMenu />
      </header>
      {changing && (
        <div className="route-progress" role="progressbar" aria-label="Opening the view">
          <div />
        </div>
      )}
      <div className="consent-slot">
        <WaitingConsent />
      </div>
      <Nav place={place} narrow={nav.narrow} toggle={nav.toggle} />
      <main className="view" id="main">
        <Suspense fallback={<Loading />}>
          <View place={place} rest={route.slice(1)} />
        </Suspense>
      </main>
      <Notices />
      {(paletteOpen || paletteUsed) && (
        <Suspense fallback={null}>
          <Palette
            open={paletteOpen}
            onOpenChange={showPalette}
            theme={theme}
            setTheme={setTheme}
          />
        </Suspense>
      )}
    </div>
  );
}

function View({ place, rest }: { place: string; rest: string[] }) {
  switch (place) {
    case "approvals":
      return <views.approvals />;
    case "jobs":
      return <views.jobs rest={rest} />;
    case "audit":
      return <views.audit rest={rest} />;
    case "runbooks":
      return <views.runbooks rest={rest} />;
    case "problems":
      return <views.problems />;
    case "policy":
      return <views.policy />;
    case "metrics":
      return <views.metrics />;
    case "tokens":
      return <views.tokens />;
    default:
      return <views.tools selected={rest[0]} />;
  }
}

function Nav({ place, narrow, toggle }: { place: string; narrow: boolean; toggle: () => void }) {
  const approvals = useApprovals(false);
  const problems = useProblems();
  const session = useSession();
  const me = session.data?.person.name;
  const role = session.data?.person.role;
  const decider = role === "approver" || role === "admin";
  const own = session.data?.self_approval ?? false;
  // A reviewer's count is what waits for them; anyone else's, their own requests still waiting
  // (a count they cannot act on would only nag).
  const pending = (approvals.data ?? []).filter((a) =>
    decider ? waitsFor(a, me, decider, own) : a.state === "pending" && isMe(a.principal, me),
  ).length;
  const pendingLabel = decider ? `${pending} waiting for you` : `${pending} of yours waiting`;
  const errors = problems.data?.length ?? 0;
  return (
    <nav className="nav" aria-label="Views">
      {places.map((p) => (
        <a
          key={p.id}
          href={href(p.id)}
          aria-current={p.id === place ? "page" : undefined}
          title={narrow ? p.label : undefined}
        >
          <Icon name={p.icon} />
          <span className="nav-label">{p.label}</span>
          {p.id === "approvals" && pending > 0 && (
            <span className={decider ? "count" : "count quiet"} aria-label={pendingLabel}>
              {pending}
            </span>
          )}
          {p.id === "problems" && errors > 0 && (
            <span className="count" aria-label={`${errors} problems`}>
              {errors}
            </span>
          )}
        </a>
      ))}
      <div className="grow" />
      <p className="muted nav-help">
        <kbd>g</kbd> then a letter moves between views; <kbd>?</kbd> lists the keys.
      </p>
      <button
        type="button"
        className="ghost nav-toggle"
        aria-label={narrow ? "Widen the navigation" : "Narrow the navigation"}
        aria-expanded={!narrow}
        title={narrow ? "Widen the navigation" : "Narrow the navigation"}
        onClick={toggle}
      >
        <Icon name="chevron" />
      </button>
    </nav>
  );
}

/** What the manifest names that waits for the person's consent, above every view. */
function WaitingConsent() {
  const session = useSession();
  return <ConsentBanner waiting={session.data?.waiting_consent} />;
}

function ProjectName() {
  const session = useSession();
  const connected = useConnected();
  if (!session.data) return null;
  return (
    <span className="row muted">
      <ProjectMenu />
      <span className="badge">{session.data.tools} tools</span>
      <Forwarded to={session.data.forwarded_to} />
      {!connected && (
        <span className="badge warn" role="status">
          live updates paused: reconnecting
        </span>
      )}
    </span>
  );
}

/**
 * Where the project's audit goes while Jig runs here (`config.audit.forward`), always in
 * sight: a forwarder that came with a cloned manifest is seen, not only run.
 */
function Forwarded({ to }: { to: { name: string; url: string }[] | undefined }) {
  // Undefined from a team server older than this field.
  if (!to?.length) return null;
  const where = to.map((f) => `${f.name} (${f.url})`).join(", ");
  return (
    <span
      className="badge"
      role="note"
      title={`This project's audit is sent to ${where} while Jig runs here (config.audit.forward)`}
      aria-label={`The audit is forwarded to ${where}`}
    >
      audit → {to.map((f) => f.name).join(", ")}
    </span>
  );
}

function Loading() {
  return (
    <div className="page" aria-busy="true">
      <div className="spinner" role="progressbar" aria-label="Loading" />
    </div>
  );
}
