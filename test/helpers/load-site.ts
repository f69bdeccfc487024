import { applySeed, seedSchema } from '../../src/cli/offline/seed.js';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import type { Db } from '../../src/store/database.js';
import type { VehicleSpec } from '../../simulators/shared/simulated-charge-point.js';
import { API_KEY, PASSWORD_HASH, startTestGateway, type TestGateway } from './gateway.js';
import { bearer, mintToken, startSession } from './http.js';
import { createOperator, op } from './operator.js';
import {
  bootedCharger,
  ocpp16,
  ocpp201,
  type ProtocolUnderTest,
  type SimulatedChargePoint,
} from './simulated-charger.js';
import { SiteTrace, type TracedConnector } from './site-trace.js';
import { waitUntil } from './wait.js';
import { WireTap } from './wire-tap.js';

/**
 * A depot of 12 simulated connectors on both protocols behind one site limit (issue 17's "done
 * when"): three OCPP 1.6J AC chargers with two connectors each and three OCPP 2.0.1 DC stations
 * with two EVSEs each, mixed minimum and maximum power, one AC charger whose firmware refuses
 * charging profiles. Every frame passes through a WireTap, and a SiteTrace keeps the site's
 * power as the gateway received it. Drivers are seeded with wallets; sessions start through
 * POST /v1/sessions as a fleet backend starts them.
 */

export const AC_VOLTS = 230;
/** The simulated DC pack's highest voltage (simulators/shared/meter-reading.ts packVoltage). */
export const DC_VOLTS = 410;

export interface SiteCharger {
  id: string;
  protocol: ProtocolUnderTest;
  kind: 'ac' | 'dc';
  connectors: 2;
  maxW: number;
  minW: number;
  /** AC only: phases and the current range the power range comes from. */
  phases?: 1 | 3;
  refusesProfiles?: boolean;
}

const ac = (amps: number) => amps * 3 * AC_VOLTS;

export const SITE_CHARGERS: SiteCharger[] = [
  {
    id: 'LS-AC-1',
    protocol: ocpp16,
    kind: 'ac',
    connectors: 2,
    maxW: ac(32),
    minW: ac(6),
    phases: 3,
  },
  {
    id: 'LS-AC-2',
    protocol: ocpp16,
    kind: 'ac',
    connectors: 2,
    maxW: ac(16),
    minW: ac(6),
    phases: 3,
  },
  {
    id: 'LS-AC-3',
    protocol: ocpp16,
    kind: 'ac',
    connectors: 2,
    maxW: ac(16),
    minW: ac(8),
    phases: 3,
    refusesProfiles: true,
  },
  { id: 'LS-DC-1', protocol: ocpp201, kind: 'dc', connectors: 2, maxW: 50_000, minW: 5_000 },
  { id: 'LS-DC-2', protocol: ocpp201, kind: 'dc', connectors: 2, maxW: 60_000, minW: 10_000 },
  { id: 'LS-DC-3', protocol: ocpp201, kind: 'dc', connectors: 2, maxW: 40_000, minW: 10_000 },
];

/** Tariffs of the test config (test/helpers/gateway.ts): micro-NGN per Wh. */
export const MICRO_NGN_PER_WH = { ac: 250_000, dc: 412_500 } as const;

export const SITE_DRIVERS = Array.from({ length: 16 }, (_, i) => ({
  id: `drv-site-${i + 1}`,
  email: `site${i + 1}@fleet.test`,
}));

export const AC_VEHICLE: VehicleSpec = {
  model: 'BYD Atto 3',
  batteryKwh: 60.5,
  socPercent: 15,
  maxPowerW: 22_000,
};
export const DC_VEHICLE: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 10,
  maxPowerW: 220_000,
};

/**
 * The site's chargers as the gateway's config lists them, with their load-management range: AC by
 * current and phases, DC by power, each its real power (the simulators' time factor scales only
 * the plausibility bound: `simulation.timeFactor` in siteConfig).
 */
export function siteChargersConfig(): GatewayConfigInput['chargers'] {
  return SITE_CHARGERS.map((c) => ({
    id: c.id,
    passwordHash: PASSWORD_HASH,
    connectors: [1, 2].map((n) => ({
      id: String(n),
      tariff: c.kind,
      type: c.kind === 'ac' ? ('AC' as const) : ('DC' as const),
      minPowerKw: c.minW / 1000,
      ...(c.kind === 'ac'
        ? { maxPowerKw: c.maxW / 1000, maxCurrentA: c.maxW / (AC_VOLTS * 3), phases: 3 as const }
        : { maxPowerKw: c.maxW / 1000 }),
    })),
  }));
}

export function tracedConnectors(): TracedConnector[] {
  return SITE_CHARGERS.flatMap((c) =>
    [1, 2].map((n) => ({
      chargerId: c.id,
      connectorId: String(n),
      maxW: c.maxW,
      volts: c.kind === 'ac' ? AC_VOLTS : DC_VOLTS,
      phases: c.kind === 'ac' ? (3 as const) : (1 as const),
    })),
  );
}

export interface SiteSession {
  sessionId: string;
  chargerId: string;
  connectorId: number;
  driverEmail: string;
  amount: number;
  tariff: 'ac' | 'dc';
  /** The driver's token, for the driver's session read. */
  token: string;
  transactionId?: string | number;
  meterStart?: number;
  meterStop?: number;
  stopReason?: string;
}

/** The gateway under test, in this process (the test) or its own (the bench). */
export interface SiteGateway {
  url: string;
  ocppUrl: string;
  operatorUrl: string;
  /** For reading sessions and the ledger. */
  db: Db;
  /** Seeded drivers of API_KEY's fleet, each with a wallet that covers every session here. */
  driverEmails: readonly string[];
  /** An operator's credential (role operator). */
  operatorCredential: string;
  close(): Promise<void>;
}

export interface LoadSiteOptions {
  limitW: number;
  timeFactor: number;
}

/** The meter sample interval of the site config (10 simulated s) in wall-clock ms. */
export const METER_INTERVAL_S = 10;
export function meterIntervalMs(timeFactor: number): number {
  return (METER_INTERVAL_S * 1000) / timeFactor;
}

/** The site config every run uses: the chargers, their power ranges and a meter sample every 10 s. */
export function siteConfig(
  timeFactor: number,
  extra: Partial<GatewayConfigInput> = {},
): Partial<GatewayConfigInput> {
  return {
    ocpp: {
      meterSampleIntervalSeconds: METER_INTERVAL_S,
      callTimeoutSeconds: 2,
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
    },
    sessions: {
      startTimeoutSeconds: 5,
      maxAmount: 1_000_000,
      stopLeadMilliseconds: 0,
      stopRetrySeconds: 0.05,
      stopGraceSeconds: 0.3,
    },
    chargers: siteChargersConfig(),
    simulation: { timeFactor },
    ...extra,
  };
}

/** The site's gateway in this process (test/helpers/gateway.ts), its drivers seeded. */
export async function inProcessGateway(
  timeFactor: number,
  extra: Partial<GatewayConfigInput> = {},
): Promise<SiteGateway & { t: TestGateway }> {
  const t = await startTestGateway(siteConfig(timeFactor, extra));
  applySeed(
    t.gw.db,
    seedSchema.parse({
      fleets: [
        {
          id: 'fleet-a',
          name: 'Fleet A',
          apiKeys: [API_KEY],
          drivers: SITE_DRIVERS.map((d) => ({ ...d, openingBalance: 100_000 })),
        },
      ],
    }),
    new Date().toISOString(),
  );
  return {
    t,
    get url() {
      return t.gw.url;
    },
    get ocppUrl() {
      return t.gw.ocppUrl;
    },
    get operatorUrl() {
      return t.gw.operatorUrl;
    },
    get db() {
      return t.gw.db;
    },
    driverEmails: SITE_DRIVERS.map((d) => d.email),
    operatorCredential: createOperator(t.gw.db, 'site-test', 'operator'),
    close: () => t.close(),
  };
}

export class LoadSite {
  readonly sessions: SiteSession[] = [];
  readonly chargers = new Map<string, SimulatedChargePoint>();
  private nextDriver = 0;

  private constructor(
    readonly gw: SiteGateway,
    readonly tap: WireTap,
    readonly trace: SiteTrace,
    readonly options: LoadSiteOptions,
  ) {}

  /** Starts the tap in front of the gateway and boots every charger through it. */
  static async start(gw: SiteGateway, options: LoadSiteOptions): Promise<LoadSite> {
    const tap = new WireTap(gw.ocppUrl);
    await tap.start();
    // One meter interval to obey, and one more for the simulators' event loops on a shared machine.
    const trace = new SiteTrace(
      tracedConnectors(),
      options.limitW,
      2 * meterIntervalMs(options.timeFactor),
    );
    tap.onFrame((frame) => trace.record(frame));
    const site = new LoadSite(gw, tap, trace, options);
    for (const c of SITE_CHARGERS) {
      const cp = await bootedCharger(c.protocol, { ocppUrl: tap.url, db: gw.db }, c.id, {
        connectors: c.connectors,
        maxPowerW: c.maxW,
        timeFactor: options.timeFactor,
        personality: c.refusesProfiles ? ['rejects-profiles'] : [],
      });
      site.chargers.set(c.id, cp);
      cp.on('transactionStopped', (e) => {
        // By transaction id; a 1.6 charger may name its transaction by a provisional id until
        // the StartTransaction answer, so else the connector's open session.
        const open = site.sessions.filter((x) => x.chargerId === c.id && x.meterStop === undefined);
        const s =
          open.find((x) => x.transactionId === e.transactionId) ??
          open.find((x) => x.connectorId === e.connectorId && x.meterStart !== undefined);
        if (s) {
          s.meterStop = e.meterStop;
          s.stopReason = e.reason;
        }
      });
    }
    return site;
  }

  /** The operator lowers the site's limit (PUT), or clears the override (watts null). */
  async operatorLimit(watts: number | null, contractW: number): Promise<void> {
    this.trace.setLimit(watts ?? contractW);
    const res =
      watts === null
        ? await op(
            this.gw.operatorUrl,
            this.gw.operatorCredential,
            'DELETE',
            '/site/power/limits/site',
          )
        : await op(
            this.gw.operatorUrl,
            this.gw.operatorCredential,
            'PUT',
            '/site/power/limits/site',
            {
              limitKw: watts / 1000,
              reason: 'load test',
            },
          );
    if (res.status !== 200)
      throw new Error(`limit ${watts}: ${res.status} ${JSON.stringify(res.body)}`);
  }

  charger(id: string): SimulatedChargePoint {
    const cp = this.chargers.get(id);
    if (!cp) throw new Error(`no charger ${id}`);
    return cp;
  }

  spec(id: string): SiteCharger {
    const spec = SITE_CHARGERS.find((c) => c.id === id);
    if (!spec) throw new Error(`no charger ${id}`);
    return spec;
  }

  /** A driver plugs in and the fleet backend starts a paid session through POST /v1/sessions. */
  async startSession(chargerId: string, connectorId: number, amount: number): Promise<SiteSession> {
    const spec = this.spec(chargerId);
    const email = this.gw.driverEmails[this.nextDriver++ % this.gw.driverEmails.length];
    if (!email) throw new Error('no driver');
    const cp = this.charger(chargerId);
    await cp.plugIn(connectorId, spec.kind === 'ac' ? AC_VEHICLE : DC_VEHICLE);
    // Listened for before the Start: the charger may start before the HTTP answer arrives.
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === connectorId, 15_000);
    started.catch(() => undefined); // a refused Start throws below instead
    const token = await mintToken(this.gw.url, API_KEY, email);
    const res = await startSession(
      this.gw.url,
      token,
      { chargerId, connectorId: String(connectorId), driverEmail: email },
      amount,
    );
    if (res.status !== 200)
      throw new Error(
        `start ${chargerId}/${connectorId}: ${res.status} ${JSON.stringify(res.body)}`,
      );
    const session: SiteSession = {
      sessionId: (res.body as { sessionId: string }).sessionId,
      chargerId,
      connectorId,
      driverEmail: email,
      amount,
      tariff: spec.kind,
      token,
    };
    this.sessions.push(session);
    const tx = await started;
    session.meterStart = tx.meterStart;
    session.transactionId = tx.transactionId;
    return session;
  }

  /** The driver ends the session at the charger (stop button) and unplugs. */
  async stopAtCharger(session: SiteSession): Promise<void> {
    const cp = this.charger(session.chargerId);
    if (cp.state(session.connectorId).transactionId !== undefined) {
      const stopped = cp.waitFor(
        'transactionStopped',
        (e) => e.connectorId === session.connectorId,
        10_000,
      );
      await cp.interrupt(session.connectorId, 'Local');
      await stopped;
    }
    await cp.unplug(session.connectorId);
  }

  /**
   * Waits until the site is quiet: `quietMs` since the last limit change and the last profile
   * call, none in flight, every lower landed and every charging connector reported since its
   * last lower. Bounded: a gateway that never settles fails here.
   */
  async settle(quietMs: number, timeoutMs = 15_000): Promise<void> {
    await waitUntil(
      () => {
        const now = performance.now();
        const lastChange = this.trace.limitChanges.at(-1)?.atMs ?? 0;
        return (
          now - Math.max(lastChange, this.trace.lastProfileActivityMs) >= quietMs &&
          this.trace.profilesInFlight() === 0 &&
          this.trace.settled()
        );
      },
      timeoutMs,
      'the site to settle',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${this.trace.describe()}`);
    });
  }

  /** The driver's session read (GET /v1/sessions/:id). */
  async read(session: SiteSession): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.gw.url}/v1/sessions/${session.sessionId}`, {
      headers: bearer(session.token),
    });
    if (res.status !== 200) throw new Error(`read ${session.sessionId}: ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  row(sessionId: string): SessionRow {
    return this.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(sessionId) as SessionRow;
  }

  /**
   * Waits until every session is settled or refunded, and every settled one's charger has
   * reported its stop (a simulator emits it once the StopTransaction answer is back, which can be
   * after the gateway settled it).
   */
  async allEnded(timeoutMs = 30_000): Promise<void> {
    const ended = (s: SiteSession) => {
      const state = this.row(s.sessionId).state;
      return state === 'refunded' || (state === 'settled' && s.meterStop !== undefined);
    };
    await waitUntil(() => this.sessions.every(ended), timeoutMs, 'every session ended').catch(
      (error: unknown) => {
        const open = this.sessions
          .map((s) => ({ s, row: this.row(s.sessionId) }))
          .filter(({ s }) => !ended(s))
          .map(
            ({ s, row }) =>
              `${s.chargerId}/${s.connectorId} ${row.state} ${row.last_meter_wh ?? 0} Wh`,
          );
        throw new Error(`${String(error)}: open ${open.join(', ')}; ${this.trace.describe()}`);
      },
    );
  }

  /**
   * Money from the meter: each session billed exactly its delivered energy (the simulator's own
   * register at start and stop), never more than it paid, the rest credited, debit and outcome in
   * the ledger agreeing, and every ledger invariant holding. Returns what is wrong (none: []).
   */
  billingProblems(): string[] {
    const problems: string[] = [];
    for (const s of this.sessions) {
      const row = this.row(s.sessionId);
      const delivered = (s.meterStop ?? s.meterStart ?? 0) - (s.meterStart ?? 0);
      const cost = Math.min(
        s.amount,
        Math.floor((delivered * MICRO_NGN_PER_WH[s.tariff]) / 1_000_000),
      );
      const expected =
        row.state === 'refunded'
          ? { state: 'refunded', delivered_wh: null, cost: null, credited: null }
          : { state: 'settled', delivered_wh: delivered, cost, credited: s.amount - cost };
      const got = {
        state: row.state,
        delivered_wh: row.delivered_wh,
        cost: row.cost,
        credited: row.credited,
      };
      if (row.state === 'refunded' && delivered !== 0) {
        problems.push(`${s.sessionId}: refunded after delivering ${delivered} Wh`);
      }
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        problems.push(
          `${s.sessionId}: ${JSON.stringify(got)}, metered ${JSON.stringify(expected)}`,
        );
      }
      const money = this.gw.db
        .prepare(
          `SELECT coalesce(sum(CASE WHEN kind = 'session_debit' THEN -amount ELSE 0 END), 0) AS debited,
                  coalesce(sum(CASE WHEN kind IN ('session_credit', 'session_refund') THEN amount ELSE 0 END), 0) AS returned
           FROM ledger_entries WHERE session_id = ?`,
        )
        .get(s.sessionId) as { debited: number; returned: number };
      const charged = money.debited - money.returned;
      const owed = row.state === 'refunded' ? 0 : cost;
      if (money.debited !== s.amount || charged !== owed) {
        problems.push(
          `${s.sessionId}: ledger debited ${money.debited}, returned ${money.returned}; metered cost ${owed}`,
        );
      }
    }
    const report = verifyLedger(this.gw.db);
    for (const check of report.checks) {
      if (check.violations.length > 0) problems.push(`ledger: ${JSON.stringify(check)}`);
    }
    return problems;
  }

  async close(): Promise<void> {
    await Promise.all([...this.chargers.values()].map((cp) => cp.disconnect()));
    await this.tap.close();
    await this.gw.close();
  }
}

export interface SessionRow {
  state: string;
  amount: number;
  limit_wh: number;
  delivered_wh: number | null;
  last_meter_wh: number | null;
  cost: number | null;
  credited: number | null;
  end_reason: string | null;
}
