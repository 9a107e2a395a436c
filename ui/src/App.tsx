import { lazy, Suspense, useEffect, useState } from "react";
import { useConnected } from "./api/context";
import { useApprovals, useProblems, useSession } from "./api/queries";
import { Icon } from "./components/Icon";
import { Palette } from "./components/Palette";
import { places } from "./lib/places";
import { href, useRoute } from "./lib/route";
import { useShortcuts } from "./lib/shortcuts";
import { useTheme } from "./lib/theme";
import { ProjectMenu } from "./views/project/ProjectMenu";

const ToolsView = lazy(() => import("./views/tools/ToolsView"));
const ApprovalsView = lazy(() => import("./views/approvals/ApprovalsView"));
const AuditView = lazy(() => import("./views/audit/AuditView"));
const JobsView = lazy(() => import("./views/jobs/JobsView"));
const ProblemsView = lazy(() => import("./views/problems/ProblemsView"));
const PolicyView = lazy(() => import("./views/policy/PolicyView"));
const MetricsView = lazy(() => import("./views/metrics/MetricsView"));
const RunbooksView = lazy(() => import("./views/runbooks/RunbooksView"));

export function App() {
  const route = useRoute();
  const place = route[0] ?? "tools";
  const [theme, setTheme] = useTheme();
  const [paletteOpen, setPaletteOpen] = useState(false);
  useShortcuts({
    openPalette: () => {
      setPaletteOpen(true);
    },
  });

  useEffect(() => {
    const label = places.find((p) => p.id === place)?.label ?? "Jig";
    document.title = `${label} · Jig`;
  }, [place]);

  return (
    <div className="app">
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
            setPaletteOpen(true);
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
        <Who />
      </header>
      <Nav place={place} />
      <main className="view" id="main">
        <Suspense fallback={<Loading />}>
          <View place={place} rest={route.slice(1)} />
        </Suspense>
      </main>
      <Palette open={paletteOpen} onOpenChange={setPaletteOpen} theme={theme} setTheme={setTheme} />
    </div>
  );
}

function View({ place, rest }: { place: string; rest: string[] }) {
  switch (place) {
    case "approvals":
      return <ApprovalsView />;
    case "jobs":
      return <JobsView rest={rest} />;
    case "audit":
      return <AuditView rest={rest} />;
    case "runbooks":
      return <RunbooksView rest={rest} />;
    case "problems":
      return <ProblemsView />;
    case "policy":
      return <PolicyView />;
    case "metrics":
      return <MetricsView />;
    default:
      return <ToolsView selected={rest[0]} />;
  }
}

function Nav({ place }: { place: string }) {
  const approvals = useApprovals(false);
  const problems = useProblems();
  const pending = approvals.data?.length ?? 0;
  const errors = problems.data?.length ?? 0;
  return (
    <nav className="nav" aria-label="Views">
      {places.map((p) => (
        <a key={p.id} href={href(p.id)} aria-current={p.id === place ? "page" : undefined}>
          <Icon name={p.icon} />
          {p.label}
          {p.id === "approvals" && pending > 0 && (
            <span className="count" aria-label={`${pending} pending`}>
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
      <p className="muted" style={{ fontSize: 12, padding: "0 8px" }}>
        <kbd>g</kbd> then a letter moves between views; <kbd>?</kbd> lists the keys.
      </p>
    </nav>
  );
}

function ProjectName() {
  const session = useSession();
  const connected = useConnected();
  if (!session.data) return null;
  return (
    <span className="row muted">
      <ProjectMenu />
      <span className="badge">{session.data.tools} tools</span>
      {!connected && (
        <span className="badge warn" role="status">
          live updates paused: reconnecting
        </span>
      )}
    </span>
  );
}

function Who() {
  const session = useSession();
  const person = session.data?.person;
  if (!person) return null;
  return (
    <span className="who" aria-label={`Signed in as ${person.name}, ${person.role}`}>
      <Icon name="user" />
      <strong>{person.name}</strong>
      <span className="badge">{person.role}</span>
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
