// The gateway's push channel (GET /admin/v1/events, server-sent events; shapes in docs/console.md).
// Views subscribe; one EventSource serves them all and reconnects by itself after a drop.

export interface LiveEvent {
  type: string;
  data: Record<string, unknown>;
}

type Listener = (e: LiveEvent) => void;
type State = 'connecting' | 'live' | 'down';

const EVENT_NAMES = [
  'charger',
  'connector',
  'meter',
  'session',
  'ledger',
  'deviation',
  'charger.online',
  'charger.offline',
  'connector.status',
  'meter.sample',
  'session.state',
  'ledger.entry',
  'deviation.seen',
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
  const obj = data as Record<string, unknown>;
  const event = { type: typeof obj.type === 'string' ? obj.type : type, data: obj };
  for (const l of listeners) l(event);
}

export function startLive(): void {
  if (source) return;
  setState('connecting');
  source = new EventSource('/admin/v1/events');
  source.onopen = () => setState('live');
  source.onerror = () =>
    setState(source?.readyState === EventSource.CLOSED ? 'down' : 'connecting');
  source.onmessage = (m) => dispatch('message', String(m.data));
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
