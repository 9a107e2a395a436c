/**
 * What the UI needs from where it runs: a way to call the API and a way to hear the engine's
 * events. The browser build talks HTTP and a WebSocket to `jig serve`; the desktop app hands the
 * same requests to the same Router in process. Nothing outside this folder knows which.
 */
export interface Platform {
  /** `web` (a browser on `jig serve`) or `desktop` (the Tauri app). */
  readonly kind: "web" | "desktop";
  /** The origin API requests are addressed to (the desktop app's is never dialled). */
  readonly baseUrl: string;
  /** Call the API: the same requests and answers as `fetch` against `jig serve`. */
  fetch(request: Request): Promise<Response>;
  /** Hear every engine event (one JSON object each); returns the unsubscribe. */
  subscribe(listener: EventListener, status?: StatusListener): () => void;
  /** Save `text` as a file the person names or downloads; `false` when they cancel. */
  save(name: string, text: string): Promise<boolean>;
  /**
   * Save what the API serves at `path` (an artifact, an attachment) as a file named `name`;
   * `false` when they cancel. The bytes never pass through the page as text.
   */
  download(path: string, name: string): Promise<boolean>;
  /** The tool list is on screen and answers keys (the desktop app's cold-start measure). */
  ready(): void;
  /**
   * Tell the person with the system's own notification (the desktop app; a browser's page uses
   * the web's Notification, which needs the person's permission).
   */
  notify?(summary: string, body: string): void;
  /** Opening projects: only the desktop app has more than one. */
  readonly projects?: Projects;
}

/** One event off the stream, parsed. */
export type EventListener = (event: unknown) => void;

/** Whether the event stream is connected (the UI says so when it is not). */
export type StatusListener = (connected: boolean) => void;

/** The desktop app's projects. */
export interface Projects {
  /** The open project, why the last one failed to open, and the recent ones. */
  current(): Promise<ProjectInfo>;
  /** Open the project at `path`; rejects with the loader's diagnostics when it cannot. */
  open(path: string): Promise<ProjectInfo>;
  /** Ask for a folder with the system's picker and open it; `null` when cancelled. */
  pick(): Promise<ProjectInfo | null>;
  /** Open the example project that comes with Jig (written out the first time). */
  example(): Promise<ProjectInfo>;
  /**
   * Sign in to the team server at `address` in the person's browser and open it; rejects
   * with why not (refused, cancelled, not reachable).
   */
  connect(address: string): Promise<ProjectInfo>;
  /** Give up a sign-in that waits for the browser. */
  cancelConnect(): void;
}

/** What the desktop app knows about projects. */
export interface ProjectInfo {
  /** The project folder open, if that is what is open. */
  path: string | null;
  /** The team server signed in to, if that is what is open. */
  server: string | null;
  failure: string | null;
  recent: string[];
  /** Team servers signed in to lately. */
  servers: string[];
}
