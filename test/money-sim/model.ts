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
  lastMeter: number | null;
  /** The energy the charger really delivered in the bound transaction (read at settlement). */
  trueWh: (() => number) | null;
  settled: { deliveredWh: number; cost: number; credited: number; trueWh: number } | null;
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

  constructor(readonly startTimeoutMs: number) {}

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

  refund(s: ModelSession): void {
    s.phase = 'refunded';
    this.balances[s.driver] += s.amount;
  }

  /**
   * A meter sample bound to the session. Without a start register, the first live sample stands
   * in for it; a queued (offline) one cannot, as it may predate a sample delivered before it.
   */
  sample(s: ModelSession, wh: number, live: boolean): void {
    if (s.phase !== 'charging') return;
    if (s.meterStart === null) {
      if (!live) return;
      s.meterStart = wh;
      s.lastMeter = wh;
      return;
    }
    if (wh < s.meterStart) return;
    s.lastMeter = Math.max(s.lastMeter ?? 0, wh);
  }

  /**
   * Settlement on the registers the gateway saw: the stop register if it is not below the start,
   * else the highest sample; nothing without a start register. Cost rounds down, capped at the
   * amount paid.
   */
  settle(s: ModelSession, meterStopWh: number | null): void {
    if (s.phase !== 'charging') return;
    let deliveredWh = 0;
    if (s.meterStart === null) {
      this.note('settled without any register');
    } else if (meterStopWh !== null && meterStopWh >= s.meterStart) {
      deliveredWh = meterStopWh - s.meterStart;
    } else {
      this.note('settled on the last sample (stop register unusable)');
      deliveredWh = Math.max(0, (s.lastMeter ?? s.meterStart) - s.meterStart);
    }
    const cost = Math.min(s.amount, costOf(deliveredWh, s.micro));
    if (cost === s.amount && costOf(deliveredWh, s.micro) > s.amount) {
      this.note('overshoot not charged');
    }
    s.phase = 'settled';
    s.settled = { deliveredWh, cost, credited: s.amount - cost, trueWh: s.trueWh?.() ?? 0 };
    this.balances[s.driver] += s.amount - cost;
  }

  /** Start timers due by `nowMs` (authorized: from the accept; orphaned: from the debit). */
  expireStartTimers(nowMs: number): void {
    for (const s of this.sessions) {
      const since =
        s.phase === 'authorized' ? s.authorizedAtMs : s.phase === 'orphaned' ? s.createdAtMs : null;
      if (since !== null && since + this.startTimeoutMs <= nowMs) {
        this.note(`start timeout (${s.phase})`);
        this.refund(s);
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
