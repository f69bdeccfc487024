import type { JsonResponse } from '../helpers/http.js';
import { DRIVERS } from '../helpers/gateway.js';

/**
 * The simulation's model of the gateway: what every wallet should hold and what every session
 * should be, kept by the test on its own arithmetic. The simulation compares it with the real
 * store after every step.
 */

export type DriverKey = 'ada' | 'bola';
export const DRIVER_KEYS: readonly DriverKey[] = ['ada', 'bola'];

/** CP-1 speaks OCPP 1.6J (two DC connectors), CP-AC OCPP 2.0.1 (one AC EVSE); see testConfig. */
export type ChargerKey = 'CP-1' | 'CP-AC';
export const CHARGER_KEYS: readonly ChargerKey[] = ['CP-1', 'CP-AC'];

export interface ConnectorKey {
  charger: ChargerKey;
  connectorId: string;
}
export const CONNECTORS: readonly ConnectorKey[] = [
  { charger: 'CP-1', connectorId: '1' },
  { charger: 'CP-1', connectorId: '2' },
  { charger: 'CP-AC', connectorId: '1' },
];

/** The test site's tariffs in micro-NGN per Wh: dc 412.5 NGN/kWh, ac 250 NGN/kWh. */
export const PRICE: Record<ChargerKey, number> = { 'CP-1': 412_500, 'CP-AC': 250_000 };

/**
 * Where a session stands, as the gateway must see it:
 * - pending: debited, remote start sent, the charger has not answered (HTTP call outstanding);
 * - authorized: the charger accepted; the start timer runs;
 * - orphaned: left `authorizing` by a restart; refunded at its start timeout unless it starts;
 * - charging: the charger's transaction is bound to it (DB `charging` or `stopping`);
 * - settled / refunded: its one outcome.
 */
export type Phase = 'pending' | 'authorized' | 'orphaned' | 'charging' | 'settled' | 'refunded';

export const OPEN_PHASES: ReadonlySet<Phase> = new Set([
  'pending',
  'authorized',
  'orphaned',
  'charging',
]);

export interface ModelSession {
  /** Order of creation in this run (ids are random; the index is what a replay shares). */
  n: number;
  id: string;
  idToken: string;
  driver: DriverKey;
  connector: ConnectorKey;
  amount: number;
  micro: number;
  limitWh: number;
  phase: Phase;
  createdAtMs: number;
  authorizedAtMs: number | null;
  balanceAfterDebit: number;
  /** The Start call while it is outstanding. */
  response: Promise<JsonResponse> | null;
  transactionRef: string | null;
  meterStart: number | null;
  /** The start register is a live sample (the charger gave none): queued readings do not count. */
  startSampled: boolean;
  /** The register in segments (a reset after a reboot starts a new one, docs/ocpp.md "Misbehaving chargers"). */
  track: Track | null;
  /** The reading held as a possible reset (the same frame again confirms nothing). */
  held: { wh: number; timestamp: string } | null;
  /** Its charger booted since its last counted sample: a lower register may be a reset. */
  rebooted: boolean;
  /** Its connector was reported in use (not Available) since the transaction started. */
  seenInUse: boolean;
  /** When the connector-Available grace runs out and the session settles without a stop. */
  graceAtMs: number | null;
  /** The Start's Idempotency-Key. */
  idemKey: string;
  /** The failure a refund before the charger accepted answers a retried Start with. */
  refundCode: string | null;
  /** The energy the charger really delivered in the bound transaction (read at settlement). */
  trueWh: (() => number) | null;
  settled: { deliveredWh: number; cost: number; credited: number; trueWh: number } | null;
}

export interface Track {
  segmentStart: number;
  carried: number;
  last: number;
  /** A lower register seen right after a reboot, held until the next sample says what it was. */
  pending: number | null;
}

export function trackWh(t: Track): number {
  return Math.max(0, t.carried + t.last - t.segmentStart);
}

export interface ModelToken {
  token: string;
  expiresAtMs: number;
}

/** Port statuses in which a connector takes a new session (src/charging/charging.ts FREE). */
const FREE = new Set(['available', 'occupied', 'unknown']);

export type StartVerdict =
  'token_expired' | 'charger_offline' | 'connector_unavailable' | 'insufficient_balance' | 'ok';

export class Model {
  readonly balances: Record<DriverKey, number> = {
    ada: DRIVERS.ada.balance,
    bola: DRIVERS.bola.balance,
  };
  readonly tokens: Record<DriverKey, ModelToken | null> = { ada: null, bola: null };
  readonly sessions: ModelSession[] = [];
  readonly online: Record<ChargerKey, boolean> = { 'CP-1': false, 'CP-AC': false };
  /** Connector status as the gateway last heard it ("unknown" until a StatusNotification). */
  private readonly status = new Map<string, string>();
  /** How often each notable case came up (printed with the run summary). */
  readonly cases = new Map<string, number>();
  /** Top-ups applied, as `driver|reference`. */
  readonly topUps: string[] = [];

  /**
   * Start timers a gateway restart moved (docs/ocpp.md "Recovery asks the charger"): refunded no
   * earlier than the recovery wait after the restart; once the charger connects, a full start
   * timeout from then. `awaiting`: the charger has not connected since the restart.
   */
  private readonly recoveryDeadlines = new Map<
    ModelSession,
    { atMs: number; awaiting: ChargerKey | null }
  >();

  constructor(
    readonly startTimeoutMs: number,
    readonly stopGraceMs: number,
    readonly recoveryWaitMs: number,
  ) {}

  note(what: string): void {
    this.cases.set(what, (this.cases.get(what) ?? 0) + 1);
  }

  statusOf(c: ConnectorKey): string {
    return this.status.get(`${c.charger}/${c.connectorId}`) ?? 'unknown';
  }

  setStatus(c: ConnectorKey, status: string): void {
    this.status.set(`${c.charger}/${c.connectorId}`, status);
  }

  openOn(c: ConnectorKey): ModelSession | undefined {
    return this.sessions.find(
      (s) =>
        OPEN_PHASES.has(s.phase) &&
        s.connector.charger === c.charger &&
        s.connector.connectorId === c.connectorId,
    );
  }

  byToken(idToken: string): ModelSession | undefined {
    return this.sessions.find((s) => s.idToken === idToken);
  }

  tokenExpired(driver: DriverKey, nowMs: number): boolean {
    const t = this.tokens[driver];
    return t !== null && nowMs >= t.expiresAtMs;
  }

  /** What Quote and Start must answer before any money moves (Start adds the balance check). */
  precheck(driver: DriverKey, c: ConnectorKey, nowMs: number): StartVerdict {
    if (this.tokenExpired(driver, nowMs)) return 'token_expired';
    if (!this.online[c.charger]) return 'charger_offline';
    if (!FREE.has(this.statusOf(c)) || this.openOn(c)) return 'connector_unavailable';
    return 'ok';
  }

  startVerdict(driver: DriverKey, c: ConnectorKey, amount: number, nowMs: number): StartVerdict {
    const pre = this.precheck(driver, c, nowMs);
    if (pre !== 'ok') return pre;
    return this.balances[driver] < amount ? 'insufficient_balance' : 'ok';
  }

  refund(s: ModelSession, code: string | null = null): void {
    s.phase = 'refunded';
    s.refundCode = code;
    this.balances[s.driver] += s.amount;
  }

  /**
   * A meter sample bound to the session. Without a start register, the first live sample stands
   * in for it; a queued (offline) one cannot, as it may predate a sample delivered before it.
   * Then the register counts in segments: a lower one right after a boot is held; the next
   * sample at or above the last one shows it was a glitch, one below the last but not below the
   * held one confirms a reset (a new segment from the held register); any other lower one is
   * ignored. The held reading again (same register and timestamp: a frame repeated after a lost
   * reply) is not a second reading. Once a live sample stood in for the start, queued readings
   * cannot be placed after it and do not count.
   */
  sample(s: ModelSession, wh: number, live: boolean, timestamp: string): void {
    if (s.phase !== 'charging') return;
    if (s.meterStart === null || s.track === null) {
      if (!live) return;
      s.meterStart = wh;
      s.startSampled = true;
      s.track = { segmentStart: wh, carried: 0, last: wh, pending: null };
      return;
    }
    if (s.startSampled && !live) {
      this.note('queued reading after a start from a live sample: not counted');
      return;
    }
    const t = s.track;
    const held = s.held;
    if (held && t.pending === held.wh && wh === held.wh && timestamp === held.timestamp) {
      this.note('held register repeated: ignored');
      return;
    }
    if (s.rebooted && wh < t.last) {
      this.note('lower register after a boot held');
      t.pending = wh;
      s.held = { wh, timestamp };
      s.rebooted = false;
      return;
    } else if (wh >= t.last) {
      if (t.pending !== null) this.note('held register was a glitch');
      t.last = wh;
      t.pending = null;
    } else if (t.pending === null || wh < t.pending) {
      return; // below the last register without a reboot: ignored, the boot flag stays
    } else {
      this.note('register reset after a boot: new segment');
      s.track = { carried: trackWh(t), segmentStart: t.pending, last: wh, pending: null };
    }
    s.rebooted = false;
    s.held = null;
  }

  /** Energy to settle on for a stop register, by the same rules (a null stop: the track; a queued one after a sampled start: the track). */
  deliveredAtStop(s: ModelSession, stopWh: number | null, live = true): number {
    const t = s.track;
    if (s.meterStart === null || t === null) {
      this.note('settled without any register');
      return 0;
    }
    if (s.startSampled && !live && stopWh !== null) {
      this.note('queued stop register after a start from a live sample: not counted');
      return trackWh(t);
    }
    if (stopWh === null) return trackWh(t);
    if (t.pending !== null && stopWh < t.last && stopWh >= t.pending) {
      this.note('stop register confirms a held reset');
      return trackWh(t) + stopWh - t.pending;
    }
    if (stopWh >= t.last) return t.carried + stopWh - t.segmentStart;
    this.note('settled on the last sample (stop register below it)');
    return trackWh(t);
  }

  /** Settlement on `deliveredWh`: cost rounds down, capped at the amount paid. */
  settleOn(s: ModelSession, deliveredWh: number): void {
    if (s.phase !== 'charging') return;
    const cost = Math.min(s.amount, costOf(deliveredWh, s.micro));
    if (cost === s.amount && costOf(deliveredWh, s.micro) > s.amount) {
      this.note('overshoot not charged');
    }
    s.phase = 'settled';
    s.graceAtMs = null;
    s.settled = { deliveredWh, cost, credited: s.amount - cost, trueWh: s.trueWh?.() ?? 0 };
    this.balances[s.driver] += s.amount - cost;
  }

  settle(s: ModelSession, meterStopWh: number | null, live = true): void {
    if (s.phase !== 'charging') return;
    this.settleOn(s, this.deliveredAtStop(s, meterStopWh, live));
  }

  /** The charger booted: each of its charging sessions may see its register reset. */
  booted(charger: ChargerKey): void {
    for (const s of this.sessions) {
      if (s.phase === 'charging' && s.connector.charger === charger) s.rebooted = true;
    }
  }

  /**
   * A status for the connector of a charging session: in use arms nothing and cancels the grace;
   * Available after use (or after energy flowed) gives the charger the grace for its stop.
   */
  statusFor(c: ConnectorKey, status: string, nowMs: number): void {
    const s = this.openOn(c);
    if (!s || s.phase !== 'charging') return;
    if (status !== 'available') {
      s.seenInUse = true;
      s.graceAtMs = null;
      return;
    }
    const flowed = s.track !== null && trackWh(s.track) > 0;
    if (s.seenInUse || flowed) s.graceAtMs = nowMs + this.stopGraceMs;
  }

  /**
   * A gateway restart forgets what it kept in memory: boots, connector use, grace timers. The
   * held reading is in the session row and survives.
   */
  gatewayRestarted(nowMs: number): void {
    for (const s of this.sessions) {
      s.rebooted = false;
      s.seenInUse = false;
      s.graceAtMs = null;
      if (s.phase !== 'authorized' && s.phase !== 'orphaned' && s.phase !== 'pending') continue;
      const since = s.phase === 'authorized' ? (s.authorizedAtMs ?? s.createdAtMs) : s.createdAtMs;
      this.recoveryDeadlines.set(s, {
        atMs: Math.max(since + this.startTimeoutMs, nowMs + this.recoveryWaitMs),
        awaiting: s.connector.charger,
      });
    }
  }

  /** A charger connected: sessions that waited for it since a restart get a full start timeout. */
  chargerConnected(charger: ChargerKey, nowMs: number): void {
    for (const [s, d] of this.recoveryDeadlines) {
      if (d.awaiting === charger)
        this.recoveryDeadlines.set(s, { atMs: nowMs + this.startTimeoutMs, awaiting: null });
    }
  }

  /**
   * Timers due by `nowMs`: start timers (authorized: from the accept; orphaned: from the debit)
   * refund; a connector-Available grace that ran out settles on the last register.
   */
  expireTimers(nowMs: number): void {
    for (const s of this.sessions) {
      if (s.phase === 'charging' && s.graceAtMs !== null && s.graceAtMs <= nowMs) {
        this.note('settled without a stop: connector Available');
        this.settleOn(s, s.track === null ? 0 : trackWh(s.track));
        continue;
      }
      const since =
        s.phase === 'authorized' ? s.authorizedAtMs : s.phase === 'orphaned' ? s.createdAtMs : null;
      const dueAt = this.recoveryDeadlines.get(s)?.atMs ?? (since ?? 0) + this.startTimeoutMs;
      if (since !== null && dueAt <= nowMs) {
        this.note(`start timeout (${s.phase})`);
        this.refund(s, 'charger_timeout');
      }
    }
  }
}

/** Whole NGN for `wh` at `micro` micro-NGN per Wh, rounded down (the driver's favour). */
export function costOf(wh: number, micro: number): number {
  return Number((BigInt(wh) * BigInt(micro)) / 1_000_000n);
}

export function paidWh(amount: number, micro: number): number {
  return Number((BigInt(amount) * 1_000_000n) / BigInt(micro));
}
