import { expect } from 'vitest';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import { IdTokenStore, type BindInput } from '../../src/id-tokens/id-token-store.js';
import { Outbox } from '../../src/store/outbox.js';
import { Wallet } from '../../src/wallet/wallet.js';
import { DRIVERS } from './gateway.js';
import { raw16, type RawProtocol, type RawStation, type StationTx } from './raw-stations.js';
import { harness, hoursAgo } from './session-harness.js';

/**
 * A site where bound cards and vehicles tap at raw-frame chargers (taps tests). Tap policy: 2,000
 * NGN a tap (4,848 Wh at CP-1's 412.5 NGN/kWh), at least 1,500; fleet B asks at least 9,500,
 * which its only driver (9,000 NGN) cannot pay.
 */
export const TAP = 2_000;
export const TAP_MINIMUM = 1_500;
export const TAP_WH = 4_848;
const PRICE = 412_500;
export const costOf = (wh: number) => Math.floor((wh * PRICE) / 1_000_000);

export const TAPS_CONFIG: GatewayConfigInput['taps'] = {
  default: { mode: 'fixed', amount: TAP, minimum: TAP_MINIMUM },
  fleets: { 'fleet-b': { minimum: 9_500 } },
};

export const CARDS = {
  ada: { driverId: DRIVERS.ada.id, kind: 'card', type: 'ISO14443', value: '04:A2:3B:1C:5D:6E:70' },
  adaCar: { driverId: DRIVERS.ada.id, kind: 'vehicle', type: 'MacAddress', value: '0A1B2C3D4E5F' },
  bola: { driverId: DRIVERS.bola.id, kind: 'card', type: 'Local', value: 'BOLA-CARD-1' },
  other: { driverId: DRIVERS.other.id, kind: 'card', type: 'Local', value: 'OTHER-CARD-1' },
  blocked: { driverId: DRIVERS.bola.id, kind: 'card', type: 'Local', value: 'BLOCKED-CARD' },
  expired: { driverId: DRIVERS.ada.id, kind: 'card', type: 'Local', value: 'EXPIRED-CARD' },
  gone: { driverId: DRIVERS.gone.id, kind: 'card', type: 'Local', value: 'GONE-CARD' },
} as const satisfies Record<string, Omit<BindInput, 'source'>>;

export interface TapRow {
  id: string;
  driver_id: string;
  state: string;
  origin: string;
  amount: number;
  id_token_id: string | null;
  started_offline: number;
  connector_id: string;
  cost: number | null;
  credited: number | null;
  delivered_wh: number | null;
}

/** The harness with the tap policy above, and what taps tests do with it. */
export function tapSite() {
  const h = harness({ startTimeoutSeconds: 5 }, { taps: TAPS_CONFIG });
  const db = () => h.t.gw.db;
  const site = {
    h,
    /** Binds every card (binding again to the same driver is idempotent). */
    bindAll(): IdTokenStore {
      const store = new IdTokenStore(db());
      const at = new Date().toISOString();
      db().transaction(() => {
        for (const [name, card] of Object.entries(CARDS)) {
          const expiresAt = name === 'expired' ? { expiresAt: hoursAgo(1) } : {};
          const bound = store.bind({ ...card, source: 'operator', ...expiresAt }, at);
          if (name === 'blocked') store.setBlocked(bound.id, 'lost', at);
        }
      })();
      return store;
    },
    balance: (driverId: string) =>
      (
        db().prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
          balance: number;
        }
      ).balance,
    /** Puts a wallet at `amount` with an adjustment (a reference of the test's own). */
    setBalance(driverId: string, amount: number): void {
      const delta = amount - site.balance(driverId);
      if (delta === 0) return;
      const reference = `test-${Math.random()}`;
      site.wallet().credit(driverId, 'adjustment', delta, reference, new Date().toISOString());
    },
    wallet: () => new Wallet(db(), new Outbox(db())),
    tapSessions: (): TapRow[] =>
      db()
        .prepare("SELECT * FROM sessions WHERE origin <> 'app' ORDER BY created_at")
        .all() as TapRow[],
    charging: () => site.tapSessions().filter((r) => r.state === 'charging'),
    debits: (sessionId: string) =>
      (
        db()
          .prepare(
            "SELECT count(*) AS n FROM ledger_entries WHERE session_id = ? AND kind = 'session_debit'",
          )
          .get(sessionId) as { n: number }
      ).n,
    ledgerClean(): void {
      const report = verifyLedger(db());
      expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
    },
    /** Authorize in the protocol's words; the status answered. */
    async authorize(protocol: RawProtocol, station: RawStation, token: string): Promise<string> {
      if (protocol === raw16) {
        const reply = (await station.send({ action: 'Authorize', params: { idTag: token } })) as {
          idTagInfo: { status: string };
        };
        return reply.idTagInfo.status;
      }
      const reply = (await station.send({
        action: 'Authorize',
        params: { idToken: { idToken: token, type: 'ISO14443' } },
      })) as { idTokenInfo: { status: string } };
      return reply.idTokenInfo.status;
    },
    /** The charger starts a transaction with `token` (no remote start): its frame and status. */
    async tap(
      station: RawStation,
      token: string,
      connector: number,
      registerWh = 10_000,
      o: { timestamp?: string; offline?: boolean } = {},
    ) {
      station.remoteStarts.push({ connector, idToken: token });
      const started = await station.start(registerWh, o);
      const reply = started.reply as {
        idTagInfo?: { status: string };
        idTokenInfo?: { status: string };
      };
      return { ...started, status: (reply.idTagInfo ?? reply.idTokenInfo)?.status };
    },
    async booted(protocol: RawProtocol, chargerId = 'CP-1'): Promise<RawStation> {
      const station = await protocol.connect(h.t.gw.ocppUrl, chargerId);
      h.track(station);
      await station.boot();
      return station;
    },
    async endAndSettle(station: RawStation, tx: StationTx, wh: number, sessionId: string) {
      await station.send(station.end(tx, wh));
      return h.settled(sessionId);
    },
  };
  return site;
}
