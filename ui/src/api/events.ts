import type { EngineEvent, Schemas } from "./client";

/** Sent by the server instead of events a slow listener lost: whatever is shown must be read
 * again. */
export type EventsLost = Schemas["EventsLost"];

/** Dispatched by the UI itself (never by the server) when the event stream comes back after
 * a drop: what happened meanwhile must be read, not heard. */
export interface StreamResumed {
  event: "StreamResumed";
}

/** Everything a view may hear on the stream, told apart by `event`. */
export type StreamEvent = EngineEvent | EventsLost | StreamResumed;

/** What the platform delivered, as an event: every one the server sends names itself in
 * `event` (the schema's discriminator); anything else is not ours to show. */
export function streamEvent(received: unknown): StreamEvent | null {
  const named =
    typeof received === "object" &&
    received !== null &&
    typeof (received as { event?: unknown }).event === "string";
  return named ? (received as StreamEvent) : null;
}

type Listener = (event: StreamEvent) => void;

/** Fans the one event stream out to the views that listen (a run panel, the approvals queue). */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly connectedListeners = new Set<(connected: boolean) => void>();
  connected = false;

  dispatch(event: StreamEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  setConnected(connected: boolean): void {
    this.connected = connected;
    for (const listener of this.connectedListeners) listener(connected);
  }

  onConnected(listener: (connected: boolean) => void): () => void {
    this.connectedListeners.add(listener);
    return () => {
      this.connectedListeners.delete(listener);
    };
  }
}
