import { useEffect } from 'preact/hooks';

// The gateway's push channel (GET /admin/v1/events, server-sent events; shapes in docs/console.md).
// Views subscribe; one EventSource serves them all and reconnects by itself after a drop.

export interface LiveEvent {
  type: string;
  data: Record<string, unknown>;
}

type Listener = (e: LiveEvent) => void;
type State = 'connecting' | 'live' | 'down';

/** The gateway's event names (docs/console.md, "Server side"). */
const EVENT_NAMES = [
  'charger.online',
  'charger.offline',
  'charger.booted',
  'connector.status',
  'meter.sample',
  'session.state',
  'ledger.entry',
  'deviation',
  'alert.raised',
  'alert.cleared',
];

const listeners = new Set<Listener>();
const stateListeners = new Set<(s: State) => void>();
let source: EventSource | null = null;
let state: State = 'down';

function setState(s: State): void {
  state = s;
  for (const l of stateListeners) l(s);
}

function dispatch(type: string, raw: string): void {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return;
  }
  if (typeof data !== 'object' || data === null) return;
  const event = { type, data: data as Record<string, unknown> };
  for (const l of listeners) l(event);
}

export function startLive(): void {
  if (source) return;
  setState('connecting');
  source = new EventSource('/admin/v1/events');
  // Whatever happened while the stream was down was not pushed: views fetch again on every (re)open.
  source.onopen = () => {
    setState('live');
    for (const l of listeners) l({ type: 'resync', data: {} });
  };
  source.onerror = () =>
    setState(source?.readyState === EventSource.CLOSED ? 'down' : 'connecting');
  for (const name of EVENT_NAMES) {
    source.addEventListener(name, (m) => dispatch(name, String((m as MessageEvent).data)));
  }
}

export function stopLive(): void {
  source?.close();
  source = null;
  setState('down');
}

export function onLive(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function onLiveState(fn: (s: State) => void): () => void {
  stateListeners.add(fn);
  fn(state);
  return () => stateListeners.delete(fn);
}

/** Calls `reload` after a burst of live events settles, at most every `ms`: one fetch per burst. */
export function useLiveReload(
  reload: () => void,
  accept: (type: string, data: Record<string, unknown>) => boolean,
  ms = 200,
): void {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = onLive((e) => {
      if ((e.type !== 'resync' && !accept(e.type, e.data)) || timer) return;
      timer = setTimeout(() => {
        timer = null;
        reload();
      }, ms);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [reload]);
}
