import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './gateway.js';
import { mintToken, startSession } from './http.js';
import { HARNESS_SESSIONS } from './session-harness.js';
import { raw16, type RawStation, type StationTx } from './raw-stations.js';
import { waitUntil } from './wait.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface AlertSite {
  t: TestGateway;
  station: RawStation;
  /** The session whose stop escalated and left an operator loss. */
  sessionId: string;
  close(): Promise<void>;
}

/**
 * A charger that takes every stop and keeps charging: from 12,500 Wh (past the 2,424 Wh that
 * 1,000 NGN pays for, from 10,000), 50 Wh more every 50 ms until `done`; the last register.
 */
export async function chargePastTheStop(
  station: RawStation,
  tx: StationTx,
  done: () => boolean,
): Promise<number> {
  let register = 12_500;
  await station.send(station.sample(tx, register));
  await waitUntil(
    async () => {
      if (done()) return true;
      register += 50;
      await station.send(station.sample(tx, register));
      await sleep(50);
      return false;
    },
    15_000,
    'the stop escalated',
  );
  return register;
}

const count = (t: TestGateway, sql: string): number =>
  (t.gw.db.prepare(`SELECT count(*) AS n FROM alerts WHERE ${sql}`).get() as { n: number }).n;

/**
 * A test site with real alerts, each from what real chargers did over real sockets: CP-AC and
 * CP-OFF never connect (offline), CP-1 (raw OCPP 1.6) reports connector 2 Faulted, and a paid
 * session on its connector 1 ignores every remote stop and runs past the paid energy (a stop
 * escalated, cleared when it settles; an operator loss, open until acknowledged). With `webhook`
 * each event also goes to it.
 */
export async function alertSite(webhook?: {
  url: string;
  secret: string;
  retrySeconds?: number;
}): Promise<AlertSite> {
  const t = await startTestGateway({
    sessions: { ...HARNESS_SESSIONS, stopVerifySeconds: 0.2 },
    alerts: {
      checkSeconds: 0.05,
      raiseAfterSeconds: 0,
      clearAfterSeconds: 0,
      chargerOfflineSeconds: 0,
      operatorLossWh: 0,
      diskFreePercent: 0,
      certificateDays: 0,
      ...(webhook ? { webhook } : {}),
    },
  });
  const station = await raw16.connect(t.gw.ocppUrl, 'CP-1');
  await station.boot();
  await station.send({
    action: 'StatusNotification',
    params: { connectorId: 2, errorCode: 'GroundFailure', status: 'Faulted' },
  });
  const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  const started = await startSession(
    t.gw.url,
    token,
    { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
    1000,
  );
  const { sessionId } = started.body as { sessionId: string };
  const { tx } = await station.start(10_000);
  const register = await chargePastTheStop(
    station,
    tx,
    () => count(t, `kind = 'stop_escalated' AND subject = '${sessionId}'`) > 0,
  );
  await station.send(station.end(tx, register, { reason: 'Remote' }));
  await waitUntil(
    () =>
      count(t, "kind = 'operator_loss' AND cleared_at IS NULL") === 1 &&
      count(t, "kind = 'stop_escalated' AND cleared_at IS NOT NULL") === 1 &&
      count(t, "kind IN ('charger_offline', 'charger_faulted') AND cleared_at IS NULL") === 3,
    15_000,
    'the site alerts',
  );
  return {
    t,
    station,
    sessionId,
    async close() {
      await station.close();
      await t.close();
    },
  };
}
