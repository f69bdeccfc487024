import Database from 'better-sqlite3';
import { verifyLedger, formatLedgerReport } from '../../../src/cli/offline/verify-ledger.js';
import { bearer, mintToken } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';
import {
  API_KEY,
  driverEmail,
  startGatewayChild,
  type GatewayChild,
} from '../lib/gateway-child.js';
import type { BenchContext } from '../lib/results.js';
import { forkChild, unwrap, type Child } from './children.js';
import type {
  BareApiReady,
  BareChargersReady,
  BareLifeReady,
  BareLifeResult,
  ChargerFleetReady,
  ChargerFleetStats,
  LoadRequest,
  LoadResult,
  LoadTarget,
} from './messages.js';

/** The site's sessions.maxAmount (test config): the bare route's schema uses the same bound. */
export const MAX_AMOUNT = 1_000_000;

export interface HttpSite {
  gw: GatewayChild;
  chargerIds: string[];
  connectors: number;
  tokens: string[];
  fleet: Child<ChargerFleetStats | ChargerFleetReady | { error: string }>;
  chargerStats(): Promise<ChargerFleetStats>;
  /** Waits until every transaction the chargers began has ended (connectors free again). */
  quiet(): Promise<ChargerFleetStats>;
  /** Ledger invariants of the gateway's database (read-only): throws on any violation. */
  verifyMoney(): void;
}

/**
 * A gateway child with `chargers` raw-frame chargers (half 1.6J, half 2.0.1; each 2 connectors)
 * in a charger process and a driver token per driver, minted over HTTP with the fleet's API key.
 */
export async function startSite(
  ctx: BenchContext,
  o: { chargers: number; drivers: number; holdMs: number },
  started: { stop(): Promise<void> }[],
): Promise<HttpSite> {
  const chargerIds = Array.from(
    { length: o.chargers },
    (_, i) => `CP-${String(i).padStart(4, '0')}`,
  );
  const connectors = 2;
  const gw = await startGatewayChild(ctx.tempDir(), {
    chargers: chargerIds,
    connectors,
    drivers: o.drivers,
    balance: 100_000_000,
  });
  started.push(gw);
  const fleet = forkChild<ChargerFleetStats | ChargerFleetReady | { error: string }>('chargers.js');
  started.push(fleet);
  fleet.send({
    connect: {
      ocppUrl: gw.ocppUrl,
      chargers: chargerIds.map((id, i) => ({ id, protocol: i % 2 === 0 ? '1.6' : '2.0.1' })),
      holdMs: o.holdMs,
    },
  });
  const ready = unwrap(await fleet.next()) as ChargerFleetReady;
  if (ready.connected !== chargerIds.length) {
    throw new Error(`${ready.connected} of ${chargerIds.length} chargers connected`);
  }
  const tokens: string[] = [];
  for (let i = 0; i < o.drivers; i += 1)
    tokens.push(await mintToken(gw.url, API_KEY, driverEmail(i)));

  const chargerStats = async () => {
    fleet.send({ stats: true });
    return unwrap(await fleet.next()) as ChargerFleetStats;
  };
  return {
    gw,
    chargerIds,
    connectors,
    tokens,
    fleet,
    chargerStats,
    async quiet() {
      let last = await chargerStats();
      await waitUntil(
        async () => {
          last = await chargerStats();
          return last.ended + last.failures >= last.remoteStarts;
        },
        30_000,
        'the chargers to end every transaction',
      );
      return last;
    },
    verifyMoney() {
      const db = new Database(gw.dbPath, { readonly: true });
      try {
        const report = verifyLedger(db);
        if (!report.ok) throw new Error(`ledger violated:\n${formatLedgerReport(report)}`);
      } finally {
        db.close();
      }
    },
  };
}

/** One POST per connector of the site, connector 1 of every charger first, drivers in turn. */
export function connectorTargets(
  site: HttpSite,
  body: (target: { chargerId: string; connectorId: string; driverEmail: string }) => object,
): LoadTarget[] {
  const targets: LoadTarget[] = [];
  let d = 0;
  for (let c = 1; c <= site.connectors; c += 1) {
    for (const chargerId of site.chargerIds) {
      const driver = d % site.tokens.length;
      d += 1;
      targets.push({
        body: JSON.stringify(
          body({ chargerId, connectorId: String(c), driverEmail: driverEmail(driver) }),
        ),
        headers: bearer(site.tokens[driver] as string),
      });
    }
  }
  return targets;
}

export type LoadChild = Child<LoadResult | { error: string }>;

export async function load(gen: LoadChild, req: LoadRequest): Promise<LoadResult> {
  gen.send(req);
  return unwrap(await gen.next(req.seconds * 1000 + 60_000));
}

export async function startBareApi(
  started: { stop(): Promise<void> }[],
): Promise<{ url: string; pid: number }> {
  const bare = forkChild<BareApiReady | { error: string }>('bare-api.js');
  started.push(bare);
  bare.send({ maxAmount: MAX_AMOUNT });
  const { url } = unwrap(await bare.next());
  const { pid } = bare.proc;
  if (pid === undefined) throw new Error('bare API child has no pid');
  return { url, pid };
}

/** The bare Start-life reference (bare-start-life.ts), with its chargers connected. */
export interface BareLife {
  pid: number;
  run(concurrency: number, seconds: number): Promise<BareLifeResult>;
  /** Remote starts the chargers answered so far. */
  remoteStarts(): Promise<number>;
}

export async function startBareLife(
  o: { dbPath: string; drivers: number; amount: number; chargers: number },
  started: { stop(): Promise<void> }[],
): Promise<BareLife> {
  const life = forkChild<BareLifeReady | BareLifeResult | { error: string }>('bare-start-life.js');
  started.push(life);
  life.send({ setup: o });
  const { ocppUrl } = unwrap(await life.next()) as BareLifeReady;
  const chargers = forkChild<BareChargersReady | { error: string }>('bare-start-chargers.js');
  started.push(chargers);
  chargers.send({ ocppUrl, chargers: o.chargers });
  const ready = unwrap(await chargers.next());
  if (ready.connected !== o.chargers)
    throw new Error(`${ready.connected} of ${o.chargers} bare chargers connected`);
  const { pid } = life.proc;
  if (pid === undefined) throw new Error('bare Start-life child has no pid');
  return {
    pid,
    async run(concurrency, seconds) {
      life.send({ run: { concurrency, seconds } });
      return unwrap(await life.next(seconds * 1000 + 60_000)) as BareLifeResult;
    },
    async remoteStarts() {
      chargers.send({ stats: true });
      return unwrap(await chargers.next()).remoteStarts;
    },
  };
}

/**
 * Throws unless every non-2xx is one the bench planned for: a bench that measured error replies
 * would report the speed of refusing.
 */
export function onlyPlanned(what: string, r: LoadResult, planned: string[] = []): void {
  const unplanned = Object.entries(r.codes).filter(([code]) => !planned.includes(code));
  if (unplanned.length > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(
      `${what}: unplanned replies ${JSON.stringify(r.codes)} (statuses ${JSON.stringify(r.statuses)}), ` +
        `${r.errors} socket errors, ${r.timeouts} timeouts`,
    );
  }
}

export async function stopAll(started: { stop(): Promise<void> }[]): Promise<void> {
  await Promise.allSettled(started.reverse().map((c) => c.stop()));
}
