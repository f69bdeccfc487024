/** One event for the console's live view: its name (the SSE event field) and its JSON data. */
export interface ConsoleEvent {
  event: ConsoleEventName;
  data: Record<string, unknown>;
}

export type ConsoleEventName =
  | 'charger.online'
  | 'charger.offline'
  | 'charger.booted'
  | 'connector.status'
  | 'meter.sample'
  | 'session.state'
  | 'ledger.entry'
  | 'deviation'
  | 'alert.raised'
  | 'alert.cleared';

type Listener = (event: ConsoleEvent, seq: number) => void;

/**
 * The gateway's live events for browsers, in one place: the gateway's wiring feeds it (the OCPP
 * and money layers never know it exists) and each open event stream listens. Nothing is kept:
 * a browser that (re)connects reads the current state from /admin/v1 and the stream from then on.
 */
export class ConsoleEventHub {
  private readonly listeners = new Set<Listener>();
  private seq = 0;

  publish(event: ConsoleEventName, data: Record<string, unknown>): void {
    if (this.listeners.size === 0) return;
    this.seq += 1;
    for (const listener of this.listeners) listener({ event, data }, this.seq);
  }

  /** Starts listening; returns what stops it. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Open event streams (a gauge in /metrics). */
  get clients(): number {
    return this.listeners.size;
  }
}
