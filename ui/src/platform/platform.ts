/**
 * What the UI needs from where it runs: a way to call the API and a way to hear the engine's
 * events. The browser build talks HTTP and a WebSocket to `jig serve`; the desktop app hands the
 * same requests to the same Router in process. Nothing outside this folder knows which.
 */
export interface Platform {
  /** `web` (a browser on `jig serve`) or `desktop` (the Tauri app). */
  readonly kind: "web" | "desktop";
  /** Call the API: the same requests and answers as `fetch` against `jig serve`. */
  fetch(request: Request): Promise<Response>;
  /** Hear every engine event (one JSON object each); returns the unsubscribe. */
  subscribe(listener: EventListener, status?: StatusListener): () => void;
}

/** One event off the stream, parsed. */
export type EventListener = (event: unknown) => void;

/** Whether the event stream is connected (the UI says so when it is not). */
export type StatusListener = (connected: boolean) => void;
