/**
 * Each charger's clock, as seen from ours, and when each of its stamped messages was measured.
 * A message stamped by the charger at `stamped` reaches us at `received` = stamped + skew + delay,
 * where delay (network, queueing while offline) is never negative. Over the charger's recent
 * on-time messages the smallest received − stamped is the skew plus the shortest delay: the
 * estimate of its clock offset. A charger's time, corrected (stamped + offset), is never after our
 * receive time, and differences between its corrected times are its own clock's: a queued burst
 * stamped over half an hour spans half an hour, whenever it arrives. Every reader of a sample
 * (billing's plausibility, the paid-energy stop, load management) takes its moment from here.
 *
 * A message later than the estimate by more than STEP_MS is either a replay (queued while the
 * link was down) or a clock step (NTP, an operator, on either side). Never decided from a single
 * late message after a reconnect:
 * - 2.0.1 `offline: true` is a replay, always; it never moves the estimate. A charger sends its
 *   queue before anything live, so after one, a late message not flagged is live: the clocks
 *   stepped while it was offline.
 * - A charger that has sent an on-time message since it (re)connected is not replaying: a late
 *   message from it stamped after everything it sent before means the clocks stepped, and the
 *   estimate starts again from it (a live reading aged by the step would stop its session that
 *   much early). One stamped before what it already sent is history.
 * - Otherwise (after a (re)connect, or stamped back in time), late messages are a replay unless
 *   two in a row are late by the same amount AND arrived as far apart as they were stamped (live
 *   messages): a replayed queue arrives in a burst, its stamps spaced by the sample interval, so
 *   it keeps its spacing and never resets the estimate. "As far apart" is never looser than half
 *   the spacing, so readings stamped under a second apart tell a burst from live spacing too.
 * A message earlier than the estimate by more than STEP_MS (the charger's clock stepped forward,
 * or ours back: no message arrives before it was sent) starts the estimate again from it, flagged
 * offline or not. Each step opens a new clock *epoch*: between two messages of one epoch, the
 * difference of their stamps is the time between them, whenever they arrive. A queue replayed
 * after a forward step arrives at once, each message earlier than the one before by the sample
 * interval: until two messages of the new epoch arrive as far apart as they were stamped, earlier
 * ones only lower its estimate, or each message of the burst would open an epoch of its own and
 * its gain be held as too fast for the connector.
 * The estimate is kept in SQLite (`charger_clock_offsets`), so a gateway restarted while chargers
 * queue judges their replays against the offset it had, not against the first late message.
 * A reboot is a reconnect too: the charger may replay what it queued before it (stamped by the
 * clock it had), so the estimate stays and late messages are judged as after any reconnect; a
 * clock the reboot set (from our BootNotification) shows as on time or as two live-spaced late
 * messages; one reset to 1970 is unusable anyway.
 */
/**
 * The estimate is the smallest received − stamped of the on-time messages of the last KEEP_MS,
 * kept as one minimum per BUCKET_MS: a replay of hundreds of messages within a second cannot push
 * the good values out (a window of the last 16 messages did, and a restarted gateway then placed
 * the rest of a long replay at its arrival), and a clock that drifts is followed within minutes.
 */
const BUCKET_MS = 30_000;
const KEEP_MS = 300_000;

interface Bucket {
  fromMs: number;
  min: number;
}

function minOf(buckets: readonly Bucket[]): number {
  let min = Number.POSITIVE_INFINITY;
  for (const b of buckets) if (b.min < min) min = b.min;
  return min;
}
/**
 * A message placed this long before its connection opened was made before it: more than a stamp
 * cut to whole seconds and the estimate's jitter can move a message made on the connection.
 */
const CONNECTION_SLACK_MS = 2_000;
/** A message arriving later than this past the estimate is late: a replay or a clock step. */
export const STEP_MS = 5_000;
/** With no estimate yet, a stamp this old is a queued message (1.6 has no offline flag). */
const QUEUED_AFTER_MS = 120_000;
/** A charger whose clock says it is before this has never set it (1970 after a reboot). */
const TRUSTED_CLOCK_FROM = Date.parse('2020-01-01T00:00:00Z');
/**
 * Two late messages stamped closer than this say nothing of live spacing: a queue whose stamps are
 * milliseconds apart arrives milliseconds apart too.
 */
const SPACING_FLOOR_MS = 100;
/** A forward step's epoch settles on two messages stamped this far apart at least. */
const SPACING_MIN_MS = 1_000;
/** Persist the estimate when it moved this much from what is stored. */
const PERSIST_DRIFT_MS = 1_000;
/** Lateness within this of each other: two messages spaced as they were stamped, whatever the jitter. */
const SPACING_SLACK_MS = 250;

export interface ChargerTime {
  /** The charger's own clock (ms): rates are its deltas. Our receive time when unusable. */
  stampMs: number;
  /** When it was measured, on our clock (ms); our receive time when the stamp is unusable. */
  atMs: number;
  /** How long before it reached us it was measured (ms, >= 0). */
  ageMs: number;
  /** Sent as it was measured (not queued while offline, not a replay). */
  live: boolean;
  /**
   * The charger's clock epoch (it changes when its clock steps): two stamps of one epoch differ
   * by the time between them. Null when the stamp is unusable.
   */
  epoch: number | null;
}

interface Epoch {
  /** When it began (our clock, ms; 0 for the first): unique, so a lost save cannot reuse it. */
  n: number;
  /**
   * Opened by a forward step and not yet settled: the message that last lowered its estimate
   * (null once two messages arrived spaced as stamped: a later early message is a step again).
   */
  anchor: { stampedMs: number; delta: number } | null;
}

interface Late {
  receivedAtMs: number;
  stampedMs: number;
  delta: number;
}

export interface ClockStore {
  load(): Iterable<{ chargerId: string; offsetMs: number; epoch: number }>;
  save(chargerId: string, offsetMs: number, epoch: number): void;
}

export class ChargerClocks {
  /** Per charger: the smallest received − stamped of its on-time messages, per bucket, oldest first. */
  private readonly deltas = new Map<string, Bucket[]>();
  /** Per charger: its last message, when it was late past the estimate. */
  private readonly late = new Map<string, Late>();
  /** Chargers that (re)connected and have not yet sent an on-time message: they may replay. */
  private readonly mayQueue = new Set<string>();
  /** Chargers that sent a message flagged offline since they (re)connected: their queue. */
  private readonly flaggedQueue = new Set<string>();
  /** Per charger: the latest stamp it sent (ms on its clock). */
  private readonly newest = new Map<string, number>();
  /** Per charger: when its current connection opened (our clock). */
  private readonly connectedAt = new Map<string, number>();
  /** The offset last stored per charger. */
  private readonly stored = new Map<string, number>();
  /** Per charger: its clock's current epoch. */
  private readonly epochs = new Map<string, Epoch>();

  constructor(
    private readonly store?: ClockStore,
    loadedAtMs = Date.now(),
  ) {
    for (const { chargerId, offsetMs, epoch } of store?.load() ?? []) {
      this.deltas.set(chargerId, [{ fromMs: loadedAtMs, min: offsetMs }]);
      this.stored.set(chargerId, offsetMs);
      this.epochs.set(chargerId, { n: epoch, anchor: null });
      // Loaded at start-up: every charger reconnects to this process and may replay a queue.
      this.mayQueue.add(chargerId);
    }
  }

  /** The charger (re)connected (at `atMs`, our clock): readings it queued while offline may follow. */
  connected(chargerId: string, atMs?: number): void {
    this.flaggedQueue.delete(chargerId);
    if (this.deltas.has(chargerId)) this.mayQueue.add(chargerId);
    if (atMs !== undefined) this.connectedAt.set(chargerId, atMs);
  }

  /**
   * Whether a message placed at `atMs` (observe's) was made before the charger's connection
   * opened: a start a 1.6 charger made offline and reports on reconnect, which it cannot flag and
   * whose lateness shows only past STEP_MS, however short the outage was.
   */
  madeBeforeConnection(chargerId: string, atMs: number): boolean {
    const since = this.connectedAt.get(chargerId);
    return since !== undefined && atMs < since - CONNECTION_SLACK_MS;
  }

  /**
   * Takes a message's stamp into the charger's estimate and places it on our clock.
   * `offline`: what the message says of being queued (2.0.1 TransactionEvent `offline`, absent
   * meaning false); undefined for a message that cannot say (1.6, 2.0.1 MeterValues).
   */
  observe(
    chargerId: string,
    timestamp: string,
    receivedAtMs: number,
    offline?: boolean,
  ): ChargerTime {
    const flaggedOffline = offline === true;
    const stamped = Date.parse(timestamp);
    if (flaggedOffline) this.flaggedQueue.add(chargerId);
    if (!Number.isFinite(stamped) || stamped < TRUSTED_CLOCK_FROM)
      return {
        stampMs: receivedAtMs,
        atMs: receivedAtMs,
        ageMs: 0,
        live: !flaggedOffline,
        epoch: null,
      };
    const delta = receivedAtMs - stamped;
    const seen = this.deltas.get(chargerId);
    let live: boolean;
    if (!seen || seen.length === 0) {
      live = !flaggedOffline && delta <= QUEUED_AFTER_MS;
      if (!flaggedOffline) this.remember(chargerId, [{ fromMs: receivedAtMs, min: delta }]);
    } else if (delta < minOf(seen) - STEP_MS) {
      live = !flaggedOffline;
      if (live) {
        this.mayQueue.delete(chargerId);
        this.late.delete(chargerId);
      }
      const opened = this.epochOf(chargerId).anchor === null;
      this.steppedForward(chargerId, seen, stamped, delta, receivedAtMs);
      if (!opened) this.settle(chargerId, stamped, delta);
    } else if (delta - minOf(seen) <= STEP_MS) {
      live = !flaggedOffline;
      if (live) {
        this.mayQueue.delete(chargerId);
        this.late.delete(chargerId);
        this.remember(chargerId, added(seen, delta, receivedAtMs));
        this.settle(chargerId, stamped, delta);
      }
    } else {
      const newest = stamped >= (this.newest.get(chargerId) ?? stamped);
      live =
        !flaggedOffline &&
        this.stepped(chargerId, stamped, receivedAtMs, delta, newest, offline === false);
    }
    if (!flaggedOffline && stamped > (this.newest.get(chargerId) ?? -Infinity))
      this.newest.set(chargerId, stamped);
    const known = this.deltas.get(chargerId);
    const offset = known && known.length > 0 ? minOf(known) : delta;
    const atMs = Math.min(stamped + offset, receivedAtMs);
    const epoch = this.epochOf(chargerId).n;
    return { stampMs: stamped, atMs, ageMs: receivedAtMs - atMs, live, epoch };
  }

  private epochOf(chargerId: string): Epoch {
    let epoch = this.epochs.get(chargerId);
    if (!epoch) this.epochs.set(chargerId, (epoch = { n: 0, anchor: null }));
    return epoch;
  }

  /** A message earlier than the estimate: the clocks stepped, or a forward step's queue goes on. */
  private steppedForward(
    chargerId: string,
    seen: Bucket[],
    stampedMs: number,
    delta: number,
    atMs: number,
  ): void {
    if (this.epochOf(chargerId).anchor !== null) {
      this.remember(chargerId, added(seen, delta, atMs));
      return;
    }
    this.epochs.set(chargerId, { n: atMs, anchor: { stampedMs, delta } });
    this.remember(chargerId, [{ fromMs: atMs, min: delta }]);
  }

  /** In an epoch opened by a forward step: the queue goes on, or two messages show it settled. */
  private settle(chargerId: string, stampedMs: number, delta: number): void {
    const epoch = this.epochOf(chargerId);
    const anchor = epoch.anchor;
    if (anchor === null) return;
    if (delta < anchor.delta - SPACING_SLACK_MS) {
      epoch.anchor = { stampedMs, delta };
      return;
    }
    const ds = stampedMs - anchor.stampedMs;
    if (
      ds >= SPACING_MIN_MS &&
      Math.abs(delta - anchor.delta) <= Math.max(SPACING_SLACK_MS, ds / 5)
    )
      epoch.anchor = null;
  }

  /** A late message, not flagged offline: true when it shows the clocks stepped (it is live). */
  private stepped(
    chargerId: string,
    stampedMs: number,
    receivedAtMs: number,
    delta: number,
    newest: boolean,
    saysLive: boolean,
  ): boolean {
    const before = this.late.get(chargerId);
    this.late.set(chargerId, { receivedAtMs, stampedMs, delta });
    // After its flagged queue, a message that could flag itself and did not is live; one that
    // cannot say (2.0.1 MeterValues) may still be part of the queue.
    const afterFlaggedQueue = saysLive && this.flaggedQueue.has(chargerId);
    if ((!this.mayQueue.has(chargerId) && newest) || afterFlaggedQueue) {
      this.mayQueue.delete(chargerId);
      this.newEpoch(chargerId, receivedAtMs);
      this.remember(chargerId, [{ fromMs: receivedAtMs, min: delta }]);
      this.late.delete(chargerId);
      return true;
    }
    if (!before || Math.abs(delta - before.delta) > STEP_MS) return false;
    const ds = stampedMs - before.stampedMs;
    const dr = receivedAtMs - before.receivedAtMs;
    // Never looser than half the spacing: a burst (arriving milliseconds apart) of readings stamped
    // under a second apart is within SPACING_SLACK_MS of their spacing. Without a floor on the
    // spacing, a charger sampling that fast is seen live after a step back (it never was: its
    // readings were history, and a reboot then stopped the session 400 Wh early).
    const spacedLive =
      ds >= SPACING_FLOOR_MS &&
      Math.abs(dr - ds) <= Math.min(ds / 2, Math.max(SPACING_SLACK_MS, ds / 5));
    if (!spacedLive) return false;
    this.mayQueue.delete(chargerId);
    this.late.delete(chargerId);
    this.newEpoch(chargerId, receivedAtMs);
    this.remember(chargerId, [{ fromMs: receivedAtMs, min: Math.min(before.delta, delta) }]);
    return true;
  }

  private newEpoch(chargerId: string, atMs: number): void {
    this.epochs.set(chargerId, { n: atMs, anchor: null });
  }

  private remember(chargerId: string, buckets: Bucket[]): void {
    this.deltas.set(chargerId, buckets);
    const offset = minOf(buckets);
    const stored = this.stored.get(chargerId);
    if (this.store && (stored === undefined || Math.abs(stored - offset) >= PERSIST_DRIFT_MS)) {
      this.stored.set(chargerId, offset);
      this.store.save(chargerId, offset, this.epochOf(chargerId).n);
    }
  }

  /** The charger's offset (our clock − its clock, ms), or null before any usable stamp. */
  offsetMs(chargerId: string): number | null {
    const seen = this.deltas.get(chargerId);
    return seen && seen.length > 0 ? minOf(seen) : null;
  }

  /** The charger rebooted: as a reconnect, and what it sent before says nothing of its order now. */
  booted(chargerId: string): void {
    this.newest.delete(chargerId);
    this.late.delete(chargerId);
    this.connected(chargerId);
  }
}

/** The buckets with `delta` taken in at `atMs`, those older than KEEP_MS dropped (never the last). */
function added(buckets: Bucket[], delta: number, atMs: number): Bucket[] {
  const last = buckets[buckets.length - 1];
  if (last && atMs >= last.fromMs && atMs - last.fromMs < BUCKET_MS)
    last.min = Math.min(last.min, delta);
  else buckets.push({ fromMs: atMs, min: delta });
  while (buckets.length > 1 && (buckets[0] as Bucket).fromMs < atMs - KEEP_MS) buckets.shift();
  return buckets;
}
