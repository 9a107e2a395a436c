import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { Platform, ProjectInfo } from "./platform";

/** What the desktop app's `api` command answers: the Router's response, whole. */
interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/**
 * The desktop app: each request goes to the same Router in process through the `api` command
 * (no TCP port), and the engine's events arrive as `jig://event` window events.
 */
export function tauriPlatform(): Platform {
  return {
    kind: "desktop",
    // Only the path and query are sent; the origin is a placeholder a URL can be built on.
    baseUrl: "http://jig.desktop",
    fetch: async (request) => {
      const url = new URL(request.url);
      const answer = await invoke<Answer>("api", {
        method: request.method,
        path: url.pathname + url.search,
        body: request.method === "GET" || request.method === "HEAD" ? null : await request.text(),
      });
      return new Response(answer.status === 204 ? null : answer.body, {
        status: answer.status,
        headers: answer.headers,
      });
    },
    subscribe: (listener, status) => {
      let stopped = false;
      // A team server's stream may break and come back (the app reconnects): said as
      // `jig://connected`, so the page re-reads what it shows.
      const stops: (() => void)[] = [];
      void Promise.all([
        listen<unknown>("jig://event", (event) => {
          listener(event.payload);
        }),
        listen<boolean>("jig://connected", (event) => {
          status?.(event.payload);
        }),
      ]).then((unlisten) => {
        if (stopped) {
          unlisten.forEach((u) => {
            u();
          });
        } else {
          stops.push(...unlisten);
          status?.(true);
        }
      });
      return () => {
        stopped = true;
        stops.forEach((u) => {
          u();
        });
      };
    },
    save: (name, text) => invoke<boolean>("save_file", { name, text }),
    download: (path, name) => invoke<boolean>("save_download", { path, name }),
    ready: () => {
      // The page's own marks, in ms since it began loading, so the app can log where a start
      // went (the desktop benchmark reads them).
      const marks: Record<string, number> = { ready: performance.now() };
      for (const mark of performance.getEntriesByType("mark")) {
        if (mark.name.startsWith("jig:")) marks[mark.name.slice(4)] = mark.startTime;
      }
      void invoke("ready", { marks });
    },
    notify: (summary, body) => {
      void invoke("notify", { summary, body });
    },
    projects: {
      current: () => invoke<ProjectInfo>("project"),
      open: (path) => invoke<ProjectInfo>("open_project", { path }),
      pick: () => invoke<ProjectInfo | null>("pick_project"),
      example: () => invoke<ProjectInfo>("open_example"),
      connect: (address) => invoke<ProjectInfo>("connect_server", { address }),
      cancelConnect: () => {
        void invoke("cancel_connect");
      },
    },
  };
}
