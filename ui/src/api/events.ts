type Listener = (event: unknown) => void;

/** Fans the one event stream out to the views that listen (a run panel, the approvals queue). */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly connectedListeners = new Set<(connected: boolean) => void>();
  connected = false;

  dispatch(event: unknown): void {
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
