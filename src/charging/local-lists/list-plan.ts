import type { LocalListEntry } from '../../ocpp/port.js';

/** A list entry with the bound token's key, which names it in the gateway's books. */
export interface KeyedEntry extends LocalListEntry {
  key: string;
}

/** What a charger's list can hold and one message can carry. */
export interface ListLimits {
  maxEntries: number;
  maxTokenLength: number;
  itemsPerMessage: number;
  /** null: the charger sets no byte bound. */
  bytesPerMessage: number | null;
}

/** One planned update; the version is given when it is sent. */
export interface PlannedUpdate {
  kind: 'full' | 'differential';
  put: KeyedEntry[];
  remove: KeyedEntry[];
}

/**
 * A message's frame around its entries, and one entry's share at most beside its token: the
 * larger (2.0.1) form, `{"idToken":{"idToken":"…","type":"ISO15693"},"idTokenInfo":{"status":
 * "Accepted","cacheExpiryDateTime":"2026-12-06T06:00:00.000Z"}},`, is 130 characters with an
 * empty token.
 */
const FRAME_BYTES = 200;
const ENTRY_BYTES = 140;

/**
 * What a charger's list is to hold: the wanted entries its protocol can say (a token longer than
 * its idTag is left out), Accepted before Blocked and then by key, cut at its capacity. `left`
 * counts those that did not fit.
 */
export function fitToList(
  wanted: readonly KeyedEntry[],
  limits: ListLimits,
): { entries: KeyedEntry[]; left: number } {
  const sayable = wanted.filter((e) => e.value.length <= limits.maxTokenLength);
  const ordered = [...sayable].sort(
    (a, b) =>
      (a.status === 'accepted' ? 0 : 1) - (b.status === 'accepted' ? 0 : 1) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  const entries = ordered.slice(0, limits.maxEntries);
  return { entries, left: wanted.length - entries.length };
}

const same = (a: KeyedEntry, b: KeyedEntry): boolean =>
  a.value === b.value && a.type === b.type && a.status === b.status && a.expiresAt === b.expiresAt;

/**
 * The differential updates that turn `held` into `target`, in messages the charger takes: removals
 * first (a token whose form changed is removed under its old value, then put under its new one),
 * so a full list never overflows. Empty when nothing differs.
 */
export function differentialPlan(
  held: ReadonlyMap<string, KeyedEntry>,
  target: readonly KeyedEntry[],
  limits: ListLimits,
): PlannedUpdate[] {
  const targetKeys = new Map(target.map((e) => [e.key, e]));
  const remove: KeyedEntry[] = [];
  for (const [key, entry] of held) {
    const next = targetKeys.get(key);
    if (!next || next.value.toUpperCase() !== entry.value.toUpperCase()) remove.push(entry);
  }
  const put = target.filter((e) => {
    const before = held.get(e.key);
    return before === undefined || !same(before, e);
  });
  const items: { op: 'put' | 'remove'; entry: KeyedEntry }[] = [
    ...remove.map((entry) => ({ op: 'remove' as const, entry })),
    ...put.map((entry) => ({ op: 'put' as const, entry })),
  ];
  return chunk(items, limits).map((part) => ({
    kind: 'differential',
    put: part.filter((i) => i.op === 'put').map((i) => i.entry),
    remove: part.filter((i) => i.op === 'remove').map((i) => i.entry),
  }));
}

/**
 * A full update of `target`: the first message replaces the list, the rest add to it
 * (differential), each within the charger's bounds. An empty list is one full update with none.
 */
export function fullPlan(target: readonly KeyedEntry[], limits: ListLimits): PlannedUpdate[] {
  const parts = chunk(
    target.map((entry) => ({ op: 'put' as const, entry })),
    limits,
  );
  if (parts.length === 0) return [{ kind: 'full', put: [], remove: [] }];
  return parts.map((part, i) => ({
    kind: i === 0 ? 'full' : 'differential',
    put: part.map((p) => p.entry),
    remove: [],
  }));
}

/** Differential when it is smaller than the full list, else full: the fewest entries sent. */
export function planUpdates(
  held: ReadonlyMap<string, KeyedEntry> | null,
  target: readonly KeyedEntry[],
  limits: ListLimits,
): PlannedUpdate[] {
  if (held === null) return fullPlan(target, limits);
  const differential = differentialPlan(held, target, limits);
  const sent = differential.reduce((n, u) => n + u.put.length + u.remove.length, 0);
  return sent > target.length ? fullPlan(target, limits) : differential;
}

function chunk<T extends { entry: KeyedEntry }>(items: readonly T[], limits: ListLimits): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let bytes = FRAME_BYTES;
  for (const item of items) {
    const size = ENTRY_BYTES + Buffer.byteLength(item.entry.value);
    const overBytes = limits.bytesPerMessage !== null && bytes + size > limits.bytesPerMessage;
    if (part.length > 0 && (part.length >= limits.itemsPerMessage || overBytes)) {
      parts.push(part);
      part = [];
      bytes = FRAME_BYTES;
    }
    part.push(item);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** `held` after the charger accepted `update`. */
export function applied(
  held: ReadonlyMap<string, KeyedEntry>,
  update: PlannedUpdate,
): Map<string, KeyedEntry> {
  const next = update.kind === 'full' ? new Map<string, KeyedEntry>() : new Map(held);
  for (const e of update.remove) next.delete(e.key);
  for (const e of update.put) next.set(e.key, e);
  return next;
}
