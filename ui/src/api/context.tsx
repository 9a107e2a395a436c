import {
  createContext,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from "react";
import { QueryClient, QueryClientProvider, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Platform } from "../platform";
import { apiClient, type Api } from "./client";
import { sessionQuery, signedOut } from "./session";
import { EventHub, streamEvent, type StreamEvent, type StreamResumed } from "./events";

interface Backend {
  platform: Platform;
  api: Api;
  events: EventHub;
}

const BackendContext = createContext<Backend | null>(null);

/** The workbench's query cache, with its defaults. */
export function newQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: false } },
  });
}

/** Provides the API, the event hub and the query cache to every view. */
export function BackendProvider({
  platform,
  children,
  client,
}: {
  platform: Platform;
  children: ReactNode;
  client?: QueryClient;
}) {
  const queryClient = useMemo(() => client ?? newQueryClient(), [client]);
  const backend = useMemo<Backend>(
    () => ({ platform, api: apiClient(platform), events: new EventHub() }),
    [platform],
  );
  return (
    <QueryClientProvider client={queryClient}>
      <BackendContext.Provider value={backend}>
        <EventBridge backend={backend} />
        {children}
      </BackendContext.Provider>
    </QueryClientProvider>
  );
}

/**
 * Subscribes to the platform's stream once the server has said who is here (not to a browser
 * it does not know: the socket would only be refused), fans events out, and refreshes what
 * they change.
 */
function EventBridge({ backend }: { backend: Backend }) {
  const queries = useQueryClient();
  const session = useQuery(sessionQuery(backend.api));
  const known = !session.isPending && !signedOut(session.error);
  useEffect(() => {
    if (!known) return undefined;
    let dropped = false;
    return backend.platform.subscribe(
      (received) => {
        const event = streamEvent(received);
        if (!event) return;
        backend.events.dispatch(event);
        for (const key of staleAfter(event)) void queries.invalidateQueries({ queryKey: [key] });
      },
      (connected) => {
        backend.events.setConnected(connected);
        // Back after a drop: whatever changed meanwhile was never announced here. Cached
        // views are read again, and the views that follow something are told to.
        if (connected && dropped) {
          void queries.invalidateQueries();
          backend.events.dispatch({ event: STREAM_RESUMED });
        }
        dropped = !connected;
      },
    );
  }, [backend, queries, known]);
  return null;
}

/** Which cached queries an event makes stale. */
function staleAfter(event: StreamEvent): string[] {
  switch (event.event) {
    case "RegistryReloaded":
      return ["tools", "tool", "session", "problems", "policy"];
    case "RegistryRejected":
      return ["problems"];
    case "ApprovalDecided":
      return ["approvals", "runs", "runbook-run"];
    case "ApprovalRequested":
      return ["approvals", "runs"];
    case "RunbookRunChanged":
      return ["runbook-runs", "runbook-run", "approvals", "runs"];
    case "RunStateChanged":
      return ["runs", "run", "jobs"];
    case "EventsLost":
      return [
        "approvals",
        "runs",
        "run",
        "jobs",
        "tools",
        "problems",
        "runbook-runs",
        "runbook-run",
      ];
    case "ToolResponse":
      return ["runs", "approvals", "jobs"];
    case "TaskProgress":
    case "OutputChunk":
    case "Heartbeat":
    case "StreamResumed":
      return [];
  }
}

export function useBackend(): Backend {
  const backend = useContext(BackendContext);
  if (!backend) throw new Error("useBackend outside BackendProvider");
  return backend;
}

export function useApi(): Api {
  return useBackend().api;
}

/** Whether the event stream is connected now. */
export function useConnected(): boolean {
  const { events } = useBackend();
  const [connected, setConnected] = useState(events.connected);
  useEffect(() => events.onConnected(setConnected), [events]);
  return connected;
}

/** The name of the event the UI dispatches itself when the stream is back (`StreamResumed`). */
export const STREAM_RESUMED: StreamResumed["event"] = "StreamResumed";

/** Call `listener` with every event while the component is mounted. */
export function useEvents(listener: (event: StreamEvent) => void): void {
  const { events } = useBackend();
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  useEffect(
    () =>
      events.listen((event) => {
        latest.current(event);
      }),
    [events],
  );
}
