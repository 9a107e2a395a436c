import { markOnce } from "../lib/marks";
import type { EventListener, Platform, StatusListener } from "./platform";

/** The browser on `jig serve`: the session cookie authenticates both the API and the socket. */
export function webPlatform(base: URL = new URL(window.location.href)): Platform {
  return {
    kind: "web",
    baseUrl: base.origin,
    fetch: (request) => fetch(request, { credentials: "same-origin" }),
    subscribe: (listener, status) => connect(eventsUrl(base), listener, status),
    save: (name, text) => {
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([text]));
      link.download = name;
      link.click();
      URL.revokeObjectURL(link.href);
      return Promise.resolve(true);
    },
    download: (path, name) => {
      // The browser fetches it itself with the session cookie and saves it as it streams.
      const link = document.createElement("a");
      link.href = new URL(path, base.origin).toString();
      link.download = name;
      link.click();
      return Promise.resolve(true);
    },
    ready: () => {
      markOnce("tools-ready");
    },
  };
}

function eventsUrl(base: URL): string {
  const url = new URL("api/events", new URL("/", base));
  url.protocol = base.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

/** A socket that reconnects with backoff (a restarted `jig serve` is picked up again). */
function connect(url: string, listener: EventListener, status?: StatusListener): () => void {
  let socket: WebSocket | undefined;
  let closed = false;
  let delay = 250;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const open = () => {
    socket = new WebSocket(url);
    socket.onopen = () => {
      delay = 250;
      status?.(true);
    };
    socket.onmessage = (message: MessageEvent<string>) => {
      try {
        listener(JSON.parse(message.data));
      } catch {
        // Not JSON: not ours to show.
      }
    };
    socket.onclose = () => {
      status?.(false);
      if (closed) return;
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    };
  };
  open();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    socket?.close();
  };
}
