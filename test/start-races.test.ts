import { afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
  UNPHYSICAL_KW,
} from './helpers/gateway.js';
import { ConnectionPool } from './helpers/http-pool.js';
import { bearer, errorCode, mintToken, type JsonResponse } from './helpers/http.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';

const CHARGERS = 20;
const CONNECTORS = 10;
const PASSWORD_HASH = hashPassword(CHARGER_PASSWORD);

/** A site of CHARGERS × CONNECTORS connectors: enough for every Start of the burst to get one. */
const bigSite = Array.from({ length: CHARGERS }, (_, c) => ({
  id: `RACE-${c}`,
  passwordHash: PASSWORD_HASH,
  connectors: Array.from({ length: CONNECTORS }, (_, k) => ({
    id: String(k + 1),
    tariff: 'dc',
    maxPowerKw: UNPHYSICAL_KW,
  })),
}));

describe('concurrent Starts', () => {
  let t: TestGateway;
  let pool: ConnectionPool | undefined;
  const chargers: RawClient[] = [];
  afterEach(async () => {
    pool?.close();
    await Promise.all(chargers.splice(0).map((c) => c.close({ force: true })));
    await t.close();
  });

  /** 1.6 chargers that accept every remote start after a few ms, so many are in flight at once. */
  async function connectChargers(ids: string[], delayMs: (i: number) => number): Promise<void> {
    let calls = 0;
    for (const id of ids) {
      const c = await rawCharger(t.gw.ocppUrl, id, CHARGER_PASSWORD);
      c.handle('RemoteStartTransaction', async () => {
        await new Promise((r) => setTimeout(r, delayMs(calls++)));
        return { status: 'Accepted' };
      });
      chargers.push(c);
    }
  }

  const count = (sql: string, ...args: unknown[]) =>
    (t.gw.db.prepare(sql).get(...args) as { n: number }).n;

  it('200 Starts at once on one wallet, over 16 connections: exactly as many succeed as the balance covers', async () => {
    // One driver token sends all 200: its per-token rate limit is not what this test is about.
    // No EV ever plugs in: on a loaded machine the burst can outlast the suite's 5 s start
    // timeout, whose refunds would free balance for later Starts (correctly, but not this count).
    t = await startTestGateway({
      chargers: bigSite,
      http: { host: '127.0.0.1', port: 0, rateLimits: { driverPerMinute: 1000 } },
      sessions: { startTimeoutSeconds: 3600, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
    await connectChargers(
      bigSite.map((c) => c.id),
      (i) => (i * 7) % 40,
    );
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    pool = new ConnectionPool(16);
    const amount = 700;
    const covered = Math.floor(DRIVERS.ada.balance / amount); // 71
    const targets = bigSite.flatMap((c) => c.connectors.map((k) => [c.id, k.id] as const));
    expect(targets).toHaveLength(200);

    const results: JsonResponse[] = await Promise.all(
      targets.map(([chargerId, connectorId]) =>
        pool!.post(
          t.gw.url,
          '/v1/sessions',
          { chargerId, connectorId, driverEmail: DRIVERS.ada.email, amount },
          bearer(token),
        ),
      ),
    );

    expect(pool.used.size).toBe(16);
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(covered);
    expect(refused.map((r) => `${r.status} ${errorCode(r)}`)).toEqual(
      Array(200 - covered).fill('402 insufficient_balance'),
    );
    // Each success saw its own balance right after its own debit: 49,300, 48,600, … 300.
    const remaining = ok.map((r) => (r.body as { remainingBalance: number }).remainingBalance);
    expect(remaining.sort((a, b) => b - a)).toEqual(
      Array.from({ length: covered }, (_, i) => DRIVERS.ada.balance - amount * (i + 1)),
    );
    const left = DRIVERS.ada.balance - covered * amount;
    expect(count('SELECT balance AS n FROM wallets WHERE driver_id = ?', DRIVERS.ada.id)).toBe(
      left,
    );
    expect(count("SELECT count(*) AS n FROM ledger_entries WHERE kind = 'session_debit'")).toBe(
      covered,
    );
    expect(count('SELECT count(*) AS n FROM sessions')).toBe(covered);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('two Starts on one connector: one wins, the other gets connector_unavailable and moves no money', async () => {
    t = await startTestGateway();
    // The charger is slow, so the loser arrives while the winner still waits for its answer.
    await connectChargers(['CP-1'], () => 150);
    const ada = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const bola = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    pool = new ConnectionPool(4);
    for (const connectorId of ['1', '2']) {
      const before = count('SELECT count(*) AS n FROM ledger_entries');
      const [a, b] = await Promise.all(
        [
          [ada, DRIVERS.ada.email],
          [bola, DRIVERS.bola.email],
        ].map(([token, driverEmail]) =>
          pool!.post(
            t.gw.url,
            '/v1/sessions',
            { chargerId: 'CP-1', connectorId, driverEmail, amount: 1000 },
            bearer(token!),
          ),
        ),
      );
      const outcomes = [a!, b!].map((r) =>
        r.status === 200 ? 'won' : `${r.status} ${errorCode(r)}`,
      );
      expect(outcomes.sort()).toEqual(['409 connector_unavailable', 'won']);
      const winner = (a!.status === 200 ? a! : b!).body as { sessionId: string };
      // Exactly one debit was written, the winner's; the loser has no session and no entry.
      expect(count('SELECT count(*) AS n FROM ledger_entries')).toBe(before + 1);
      expect(
        count(
          "SELECT count(*) AS n FROM ledger_entries WHERE kind = 'session_debit' AND session_id = ?",
          winner.sessionId,
        ),
      ).toBe(1);
      expect(
        count(
          "SELECT count(*) AS n FROM sessions WHERE charger_id = 'CP-1' AND connector_id = ?",
          connectorId,
        ),
      ).toBe(1);
    }
    const debited = (driverId: string) =>
      count(
        "SELECT COALESCE(-SUM(amount), 0) AS n FROM ledger_entries WHERE driver_id = ? AND kind = 'session_debit'",
        driverId,
      );
    expect(debited(DRIVERS.ada.id) + debited(DRIVERS.bola.id)).toBe(2000);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('50 concurrent retries of one Start with one Idempotency-Key debit once', async () => {
    t = await startTestGateway();
    await connectChargers(['CP-1'], () => 100);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    pool = new ConnectionPool(10);
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        pool!.post(
          t.gw.url,
          '/v1/sessions',
          { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email, amount: 1200 },
          { ...bearer(token), 'idempotency-key': 'app-retry-storm' },
        ),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    // The ones that arrived while the first waited for the charger were told to come back.
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(`${r.status} ${errorCode(r)}`).toBe('409 idempotency_key_in_progress');
    }
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(count("SELECT count(*) AS n FROM ledger_entries WHERE kind = 'session_debit'")).toBe(1);
    expect(count('SELECT balance AS n FROM wallets WHERE driver_id = ?', DRIVERS.ada.id)).toBe(
      DRIVERS.ada.balance - 1200,
    );
  });
});
