import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { markOnce } from "../lib/marks";
import {
  unwrap,
  type Api,
  type RunPage,
  type RunView,
  type Schemas,
  type StepAction,
} from "./client";
import { useApi } from "./context";
import { sessionQuery } from "./session";

/** Filters of the audit timeline, as the API takes them. */
export interface RunFilters {
  q?: string;
  tool?: string;
  state?: string;
  session?: string;
  principal?: string;
  since_us?: number;
  until_us?: number;
}

export function useSession() {
  const api = useApi();
  return useQuery({
    ...sessionQuery(api),
  });
}

/** The registry's tools (also asked for before the first render: `prefetchOpening`). */
export function toolsQuery(api: Api) {
  return {
    queryKey: ["tools"],
    queryFn: async () => {
      const tools = unwrap(await api.GET("/api/tools"));
      markOnce("tools");
      return tools;
    },
  };
}

export function useTools() {
  return useQuery(toolsQuery(useApi()));
}

export function useTool(id: string) {
  const api = useApi();
  return useQuery({
    queryKey: ["tool", id],
    queryFn: async () => unwrap(await api.GET("/api/tools/{id}", { params: { path: { id } } })),
  });
}

export function useApprovals(all: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: ["approvals", all],
    queryFn: async () => unwrap(await api.GET("/api/approvals", { params: { query: { all } } })),
  });
}

export function useDecide() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async ({
      id,
      verdict,
      note,
      repeats = [],
    }: {
      id: string;
      verdict: "approve" | "deny";
      note?: string;
      /** Pending requests identical to `id`'s: denied with it, or as repeats when it runs. */
      repeats?: string[];
    }) => {
      if (verdict === "deny") {
        if (repeats.length === 0) {
          unwrap(
            await api.POST("/api/approvals/{id}/deny", {
              params: { path: { id } },
              body: { reason: note ?? null },
            }),
          );
        } else {
          await decideAll(api, [id, ...repeats], "deny", note ?? "");
        }
        return null;
      }
      const approved = unwrap(
        await api.POST("/api/approvals/{id}/approve", {
          params: { path: { id } },
          body: { comment: note ?? null },
        }),
      );
      // The request runs once: the repeats end, saying why.
      if (repeats.length > 0) {
        await decideAll(
          api,
          repeats,
          "deny",
          `the same request as ${id}, which was approved: it runs once`,
        );
      }
      return approved;
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ["approvals"] }),
  });
}

/** What became of each approval of one decision. */
export type DecideOutcome = Schemas["DecideOutcome"];

/** Several approvals, one decision and one note; each is decided (or fails) on its own. */
async function decideAll(
  api: Api,
  ids: string[],
  verdict: "approve" | "deny",
  note: string,
): Promise<DecideOutcome[]> {
  return unwrap(
    await api.POST("/api/approvals/decide", { body: { ids, verdict, note: note || null } }),
  );
}

/** An approval picked in the queue, with the pending requests that ask exactly the same. */
export interface Picked {
  id: string;
  repeats: string[];
}

/**
 * Decide a reviewer's selection with one verdict and one note. A denial ends each picked
 * approval and its repeats; an approval runs each picked request once and ends its repeats
 * (only of those it did approve: one someone else decided meanwhile keeps its own).
 */
export function useDecideMany() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async ({
      picked,
      verdict,
      note,
    }: {
      picked: Picked[];
      verdict: "approve" | "deny";
      note: string;
    }) => {
      const ids = picked.map((p) => p.id);
      if (verdict === "deny") {
        return decideAll(api, [...ids, ...picked.flatMap((p) => p.repeats)], "deny", note);
      }
      const outcomes = await decideAll(api, ids, "approve", note);
      const approved = new Set(outcomes.filter((o) => o.outcome === "approved").map((o) => o.id));
      const repeats = picked.filter((p) => approved.has(p.id)).flatMap((p) => p.repeats);
      if (repeats.length > 0) {
        await decideAll(
          api,
          repeats,
          "deny",
          "the same request as one approved with it: it runs once",
        );
      }
      return outcomes;
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ["approvals"] }),
  });
}

/** The timeline, page by page (keyset cursors; newest first). */
export function useRuns(filters: RunFilters, limit = 200) {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: ["runs", filters, limit],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }): Promise<RunPage> =>
      unwrap(
        await api.GET("/api/audit/runs", {
          params: { query: { ...clean(filters), limit, after: pageParam } },
        }),
      ),
    getNextPageParam: (page) => page.next ?? undefined,
    // While another filter's runs load, the rows shown stay (marked busy) instead of the list
    // emptying and filling again: nothing jumps, and a row being opened is not pulled away.
    placeholderData: keepPreviousData,
  });
}

/** One run's record and packets: the query `useRun` keeps, for a caller that asks once. */
export function runQuery(api: Api, id: string) {
  return {
    queryKey: ["run", id],
    queryFn: async () =>
      unwrap(await api.GET("/api/audit/runs/{id}", { params: { path: { id } } })),
  };
}

export function useRun(id: string | undefined) {
  const api = useApi();
  return useQuery({ ...runQuery(api, id ?? ""), enabled: id !== undefined });
}

/** The latest batch jobs (seed 001's slurm and hybrid plans), newest first. */
export function useJobs() {
  const api = useApi();
  return useQuery({
    queryKey: ["jobs"],
    queryFn: async () => unwrap(await api.GET("/api/jobs", { params: { query: { limit: 200 } } })),
  });
}

/** What an open job printed so far, every 2 s; `null` once it has no open job (204). */
export function useJobLog(requestId: string) {
  const api = useApi();
  return useQuery({
    queryKey: ["job-log", requestId],
    refetchInterval: (query) => (query.state.data === null ? false : 2_000),
    queryFn: async () => {
      const answer = await api.GET("/api/jobs/{request_id}/log", {
        params: { path: { request_id: requestId } },
      });
      // 204: no open job (collected; its log is among the artifacts).
      if (answer.response.status === 204) return null;
      return unwrap(answer);
    },
  });
}

/** Stop a call (and the job it submitted): only who made it, or an admin, may. */
export function useCancelCall() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (requestId: string) =>
      unwrap(
        await api.POST("/api/calls/{request_id}/cancel", {
          params: { path: { request_id: requestId } },
        }),
      ),
    onSettled: () => {
      for (const key of ["jobs", "run", "runs"])
        void queries.invalidateQueries({ queryKey: [key] });
    },
  });
}

export function useVerify() {
  const api = useApi();
  return useMutation({
    mutationFn: async () => unwrap(await api.GET("/api/audit/verify")),
  });
}

export function useProblems() {
  const api = useApi();
  return useQuery({
    queryKey: ["problems"],
    queryFn: async () => unwrap(await api.GET("/api/problems")),
  });
}

export function usePolicy() {
  const api = useApi();
  return useQuery({
    queryKey: ["policy"],
    queryFn: async () => unwrap(await api.GET("/api/policy")),
  });
}

export function useMetrics() {
  const api = useApi();
  return useQuery({
    queryKey: ["metrics"],
    refetchInterval: 5_000,
    queryFn: async () => unwrap(await api.GET("/api/metrics")),
  });
}

/** The windows the metrics view offers: how far back, cut into how many buckets. */
export const WINDOWS = {
  "1h": { label: "Last hour", ms: 3_600_000, buckets: 60 },
  "6h": { label: "Last 6 hours", ms: 6 * 3_600_000, buckets: 72 },
  "24h": { label: "Last 24 hours", ms: 24 * 3_600_000, buckets: 96 },
  "7d": { label: "Last 7 days", ms: 7 * 24 * 3_600_000, buckets: 84 },
} as const;

export type WindowKey = keyof typeof WINDOWS;

/** Calls over a window ending now, from the audit store; refreshed every 10 s. */
export function useSeries(key: WindowKey) {
  const api = useApi();
  return useQuery({
    queryKey: ["series", key],
    refetchInterval: 10_000,
    placeholderData: (previous) => previous,
    queryFn: async () => {
      const { ms, buckets } = WINDOWS[key];
      // The window ends at the next bucket boundary, so buckets stay put between refreshes.
      const bucketUs = (ms * 1000) / buckets;
      const until = Math.ceil((Date.now() * 1000) / bucketUs) * bucketUs;
      return unwrap(
        await api.GET("/api/metrics/series", {
          params: { query: { since_us: until - ms * 1000, until_us: until, buckets } },
        }),
      );
    },
  });
}

/** Drop empty filters so the URL carries only what narrows. */
export function clean(filters: RunFilters): RunFilters {
  return Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== undefined && value !== ""),
  );
}

export function useRunbooks() {
  const api = useApi();
  return useQuery({
    queryKey: ["runbooks"],
    queryFn: async () => unwrap(await api.GET("/api/runbooks")),
  });
}

export function useRunbook(name: string | undefined) {
  const api = useApi();
  return useQuery({
    queryKey: ["runbooks", name],
    enabled: name !== undefined,
    queryFn: async () =>
      unwrap(await api.GET("/api/runbooks/{name}", { params: { path: { name: name ?? "" } } })),
  });
}

/** The latest runs of every runbook; refreshed by `RunbookRunChanged` events. */
export function useRunbookRuns() {
  const api = useApi();
  return useQuery({
    queryKey: ["runbook-runs"],
    queryFn: async () =>
      unwrap(await api.GET("/api/runbook-runs", { params: { query: { limit: 100 } } })),
  });
}

export function useRunbookRun(id: string) {
  const api = useApi();
  return useQuery({
    queryKey: ["runbook-run", id],
    queryFn: async () =>
      unwrap(await api.GET("/api/runbook-runs/{id}", { params: { path: { id } } })),
  });
}

export function useRunbookTrace(id: string) {
  const api = useApi();
  return useQuery({
    queryKey: ["runbook-run", id, "trace"],
    queryFn: async () =>
      unwrap(await api.GET("/api/runbook-runs/{id}/trace", { params: { path: { id } } })),
  });
}

/** What a mutation that answers with a run does with it: the run's cache, and the list. */
function useRunChanged() {
  const queries = useQueryClient();
  return (run: RunView) => {
    queries.setQueryData(["runbook-run", run.id], run);
    void queries.invalidateQueries({ queryKey: ["runbook-runs"] });
  };
}

export function useStartRunbook() {
  const api = useApi();
  const runChanged = useRunChanged();
  return useMutation({
    mutationFn: async (start: Schemas["StartRun"]): Promise<RunView> =>
      unwrap(await api.POST("/api/runbook-runs", { body: start })),
    onSuccess: runChanged,
  });
}

/** Act on a waiting step of run `id` (run, skip, evidence, choose, approve, deny, retry, abort). */
export function useActOnRun(id: string) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async ({ key, action }: { key: string; action: StepAction }): Promise<RunView> =>
      unwrap(
        await api.POST("/api/runbook-runs/{id}/act", {
          params: { path: { id } },
          body: { key, ...action },
        }),
      ),
    onSuccess: (run) => {
      queries.setQueryData(["runbook-run", id], run);
    },
    onSettled: () => {
      void queries.invalidateQueries({ queryKey: ["runbook-run", id] });
      void queries.invalidateQueries({ queryKey: ["runbook-runs"] });
      void queries.invalidateQueries({ queryKey: ["approvals"] });
    },
  });
}

/** Continue an ended run with the runbook its outcome names, with inputs over the outcome's. */
export function useFollowRun(id: string) {
  const api = useApi();
  const runChanged = useRunChanged();
  return useMutation({
    mutationFn: async (inputs: Record<string, unknown>): Promise<RunView> =>
      unwrap(
        await api.POST("/api/runbook-runs/{id}/follow", {
          params: { path: { id } },
          body: { inputs },
        }),
      ),
    onSuccess: runChanged,
  });
}

/** Hold a run before its next step that would do something, in the viewer's name. */
export function usePauseRun(id: string) {
  const api = useApi();
  const runChanged = useRunChanged();
  return useMutation({
    mutationFn: async (): Promise<RunView> =>
      unwrap(await api.POST("/api/runbook-runs/{id}/pause", { params: { path: { id } } })),
    onSuccess: runChanged,
  });
}

export function useResumeRun(id: string) {
  const api = useApi();
  const runChanged = useRunChanged();
  return useMutation({
    mutationFn: async (): Promise<RunView> =>
      unwrap(await api.POST("/api/runbook-runs/{id}/resume", { params: { path: { id } } })),
    onSuccess: runChanged,
  });
}
