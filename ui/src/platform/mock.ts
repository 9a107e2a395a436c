import type { EventListener, Platform } from "./platform";

/** Answers for component tests: a handler per request, and events pushed by the test. */
export interface MockPlatform extends Platform {
  /** Deliver an event to every subscriber. */
  emit(event: unknown): void;
  /** How many subscribers there are now (the UI subscribes once it knows who is here). */
  listening(): number;
  /** Every request made, in order. */
  readonly requests: Request[];
  /** Every download asked for: (path, name). */
  readonly downloads: [string, string][];
}

/** A platform whose API is `handle` (a test's function of the request). */
export function mockPlatform(
  handle: (request: Request) => Response | Promise<Response>,
): MockPlatform {
  const listeners = new Set<EventListener>();
  const requests: Request[] = [];
  const downloads: [string, string][] = [];
  return {
    kind: "web",
    baseUrl: "http://jig.test",
    requests,
    downloads,
    fetch: async (request) => {
      requests.push(request.clone());
      return handle(request);
    },
    subscribe: (listener, status) => {
      listeners.add(listener);
      status?.(true);
      return () => listeners.delete(listener);
    },
    save: () => Promise.resolve(true),
    download: (path, name) => {
      downloads.push([path, name]);
      return Promise.resolve(true);
    },
    ready: () => undefined,
    listening: () => listeners.size,
    emit: (event) => {
      for (const listener of listeners) listener(event);
    },
  };
}

/** A JSON answer. */
export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}
