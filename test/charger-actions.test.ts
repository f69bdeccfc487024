import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_WRITABLE_CONFIG } from '../src/config/charger-config-keys.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  testConfig,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger } from './helpers/raw-charger.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  PROTOCOLS,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const run = promisify(execFile);

/** Where the two protocols answer the same command in their own words. */
const WORDS: Record<
  string,
  {
    subprotocol: string;
    fixedCableUnlock: string;
    unknownConnectorUnlock: string;
    softResetDuringTransaction: string;
    unsupportedSetting: string;
    heartbeat: string;
    pingInterval: string;
    vendorSetting: string;
  }
> = {
  'OCPP 1.6J': {
    subprotocol: 'ocpp1.6',
    fixedCableUnlock: 'NotSupported',
    unknownConnectorUnlock: 'NotSupported',
    // 1.6 has no Scheduled: a soft reset ends the transaction gracefully, then reboots.
    softResetDuringTransaction: 'Accepted',
    unsupportedSetting: 'NotSupported',
    heartbeat: 'HeartbeatInterval',
    pingInterval: 'WebSocketPingInterval',
    vendorSetting: 'VendorThing',
  },
  'OCPP 2.0.1': {
    subprotocol: 'ocpp2.0.1',
    fixedCableUnlock: 'UnlockFailed',
    unknownConnectorUnlock: 'UnknownConnector',
    softResetDuringTransaction: 'Scheduled',
    unsupportedSetting: 'UnknownVariable',
    heartbeat: 'OCPPCommCtrlr.HeartbeatInterval',
    pingInterval: 'OCPPCommCtrlr.WebSocketPingInterval',
    vendorSetting: 'OCPPCommCtrlr.VendorThing',
  },
};

interface Answer {
  chargerId: string;
  connectorId: string | null;
  status: string;
  accepted: boolean;
  reply: unknown;
}

describe.each(PROTOCOLS)('operator actions on chargers: $name', (protocol) => {
  const words = WORDS[protocol.name];
  if (!words) throw new Error(`no words for ${protocol.name}`);
  let t: TestGateway;
  let operator: string;
  let viewer: string;
  const chargers: SimulatedChargePoint[] = [];

  beforeEach(async () => {
    const base = testConfig('unused');
    t = await startTestGateway({
      chargerOperations: {
        writableConfig: [...DEFAULT_WRITABLE_CONFIG, 'VendorThing', 'OCPPCommCtrlr.VendorThing'],
      },
      // Connector 9 is configured here but missing on the charger: its own refusals.
      chargers: (base.chargers ?? []).map((c) =>
        c.id === 'CP-1' ? { ...c, connectors: [...c.connectors, { id: '9', tariff: 'dc' }] } : c,
      ),
    });
    operator = createOperator(t.gw.db, 'otto', 'operator');
    viewer = createOperator(t.gw.db, 'vera', 'viewer');
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
    await t.close();
  });

  async function charger(identity = 'CP-1'): Promise<SimulatedChargePoint> {
    const cp = await bootedCharger(protocol, t.gw, identity);
    chargers.push(cp);
    return cp;
  }

  const act = (method: string, path: string, body?: unknown, credential = operator) =>
    op(t.gw.operatorUrl, credential, method, path, body);
  const answer = (res: JsonResponse): Answer => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Answer;
  };
  async function auditTrail(): Promise<{ action: string; status: number; result: unknown }[]> {
    const res = await act('GET', '/audit', undefined, viewer);
    expect(res.status).toBe(200);
    return (res.body as { entries: { action: string; status: number; result: unknown }[] }).entries;
  }

  /** A paid session charging on CP-1 connector 1. */
  async function chargingSession(cp: SimulatedChargePoint): Promise<string> {
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      20_000,
    );
    expect(res.status).toBe(200);
    await started;
    const sessionId = (res.body as { sessionId: string }).sessionId;
    await waitUntil(() => sessionState(sessionId) === 'charging', 5000, 'charging');
    return sessionId;
  }
  const sessionState = (id: string) =>
    (t.gw.db.prepare('SELECT state FROM sessions WHERE id = ?').get(id) as { state: string }).state;

  it('unlocks a connector, and passes on the charger’s refusals', async () => {
    const cp = await charger();
    const unlocked = answer(await act('POST', '/chargers/CP-1/connectors/1/unlock'));
    expect(unlocked).toMatchObject({ status: 'Unlocked', accepted: true, connectorId: '1' });
    expect(unlocked.reply).toEqual({ status: 'Unlocked' });

    cp.locks.set(2, 'jammed');
    expect(answer(await act('POST', '/chargers/CP-1/connectors/2/unlock'))).toMatchObject({
      status: 'UnlockFailed',
      accepted: false,
    });
    cp.locks.set(2, 'fixed-cable');
    expect(answer(await act('POST', '/chargers/CP-1/connectors/2/unlock')).status).toBe(
      words.fixedCableUnlock,
    );
    expect(answer(await act('POST', '/chargers/CP-1/connectors/9/unlock')).status).toBe(
      words.unknownConnectorUnlock,
    );

    const notFound = await act('POST', '/chargers/CP-1/connectors/7/unlock');
    expect(notFound.status).toBe(404);
    expect(errorCode(notFound)).toBe('connector_not_found');

    const trail = await auditTrail();
    expect(trail.filter((e) => e.action === 'charger.unlock').map((e) => e.status)).toEqual([
      404, 200, 200, 200, 200,
    ]);
    expect(trail.find((e) => e.action === 'charger.unlock' && e.status === 200)?.result).toEqual({
      status: words.unknownConnectorUnlock,
      accepted: false,
    });
  });

  it('resets: soft waits for a running transaction (or ends it first on 1.6), hard reboots now', async () => {
    const cp = await charger();
    const sessionId = await chargingSession(cp);
    const rebooted = cp.waitFor('connected');
    const soft = answer(await act('POST', '/chargers/CP-1/reset', { type: 'soft' }));
    expect(soft.status).toBe(words.softResetDuringTransaction);
    expect(soft.accepted).toBe(true);
    if (soft.status === 'Scheduled') {
      // The station reboots once the transaction is over; the session settles as usual.
      expect(sessionState(sessionId)).toBe('charging');
      await cp.interrupt(1, 'Local');
    }
    await rebooted;
    await waitUntil(() => sessionState(sessionId) === 'settled', 5000, 'settlement');

    const again = cp.waitFor('connected');
    const hard = answer(await act('POST', '/chargers/CP-1/reset', { type: 'hard' }));
    expect(hard).toMatchObject({ status: 'Accepted', accepted: true, connectorId: null });
    await again;

    const trail = await auditTrail();
    expect(trail.filter((e) => e.action === 'charger.reset')).toHaveLength(2);
  });

  it('an unavailable connector refuses Starts with the reason, after restarts, and is told again after a reboot', async () => {
    const cp = await charger();
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const start = (connectorId: string) =>
      startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-1', connectorId, driverEmail: DRIVERS.ada.email },
        1000,
      );

    const off = answer(
      await act('POST', '/chargers/CP-1/connectors/2/availability', {
        operative: false,
        reason: 'cable damaged',
      }),
    );
    expect(off).toMatchObject({ status: 'Accepted', accepted: true });
    await waitUntil(() => cp.state(2).status === 'Unavailable', 5000, 'Unavailable');
    const refused = await start('2');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('connector_unavailable');
    expect((refused.body as { error: { message: string } }).error.message).toMatch(
      /connector 2 on charger CP-1 was taken out of service by operator otto .*: cable damaged/,
    );
    // Who, why and when are in the charger's read, as a viewer sees it.
    const read = async () =>
      (await act('GET', '/chargers/CP-1', undefined, viewer)).body as {
        outOfService: unknown;
        connectors: { connectorId: string; outOfService: unknown }[];
      };
    const held = await read();
    expect(held.outOfService).toBeNull();
    expect(held.connectors.find((c) => c.connectorId === '2')?.outOfService).toEqual({
      by: 'otto',
      reason: 'cable damaged',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(held.connectors.find((c) => c.connectorId === '1')?.outOfService).toBeNull();

    // The decision is the gateway's, not only the charger's: it outlives a gateway restart.
    const reconnected = cp.waitFor('reconnected');
    await t.restart();
    await reconnected;
    const afterRestart = await start('2');
    expect(afterRestart.status).toBe(409);
    expect(errorCode(afterRestart)).toBe('connector_unavailable');

    // A rebooted charger hears the operator's decision again.
    const resent = new Promise<string>((resolve) =>
      cp.on('frame', (f) => {
        if (f.direction === 'in' && f.message.includes('"ChangeAvailability"')) resolve(f.message);
      }),
    );
    answer(await act('POST', '/chargers/CP-1/reset', { type: 'hard' }));
    expect(await resent).toMatch(/Inoperative/);

    const on = answer(
      await act('POST', '/chargers/CP-1/connectors/2/availability', { operative: true }),
    );
    expect(on.status).toBe('Accepted');
    expect((await read()).connectors.find((c) => c.connectorId === '2')?.outOfService).toBeNull();
    await waitUntil(() => cp.state(2).status === 'Available', 5000, 'Available');
    expect((await start('2')).status).toBe(200);
  });

  it('a whole charger out of service refuses every connector; a running transaction is Scheduled', async () => {
    const cp = await charger();
    const sessionId = await chargingSession(cp);
    const scheduled = answer(
      await act('POST', '/chargers/CP-1/connectors/1/availability', { operative: false }),
    );
    expect(scheduled).toMatchObject({ status: 'Scheduled', accepted: true });
    expect(sessionState(sessionId)).toBe('charging');

    const whole = answer(await act('POST', '/chargers/CP-1/availability', { operative: false }));
    expect(whole.connectorId).toBeNull();
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const refused = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.bola.email },
      500,
    );
    expect(refused.status).toBe(409);
    expect((refused.body as { error: { message: string } }).error.message).toMatch(
      /^charger CP-1 was taken out of service by operator otto/,
    );
    const read = (await act('GET', '/chargers/CP-1')).body as { outOfService: unknown };
    expect(read.outOfService).toMatchObject({ by: 'otto', reason: null });
  });

  it('triggers status and meter reports; an unknown connector is the charger’s Rejected', async () => {
    const cp = await charger();
    const statusSent = cp.waitFor('status', (s) => s.connectorId === 2);
    expect(
      answer(await act('POST', '/chargers/CP-1/trigger', { message: 'status', connectorId: '2' })),
    ).toMatchObject({ status: 'Accepted', accepted: true, connectorId: '2' });
    await statusSent;
    const meterSent = cp.waitFor('meterValues', (m) => m.connectorId === 1);
    expect(
      answer(await act('POST', '/chargers/CP-1/trigger', { message: 'meter', connectorId: '1' }))
        .status,
    ).toBe('Accepted');
    await meterSent;
    expect(
      answer(await act('POST', '/chargers/CP-1/trigger', { message: 'status', connectorId: '9' })),
    ).toMatchObject({ status: 'Rejected', accepted: false });
    expect(answer(await act('POST', '/chargers/CP-1/trigger', { message: 'status' })).status).toBe(
      'Accepted',
    );
  });

  it('reads configuration, with unknown keys named; changes only allow-listed settings', async () => {
    await charger();
    const read = await act(
      'GET',
      `/chargers/CP-1/config?keys=${words.heartbeat},${words.vendorSetting}`,
      undefined,
      viewer,
    );
    expect(read.status).toBe(200);
    const report = read.body as {
      entries: { key: string; value: string | null }[];
      unknownKeys: string[];
    };
    expect(report.entries).toEqual([
      expect.objectContaining({ key: words.heartbeat, value: '300' }),
    ]);
    expect(report.unknownKeys).toEqual([words.vendorSetting]);
    const all = await act('GET', '/chargers/CP-1/config', undefined, viewer);
    expect((all.body as { entries: unknown[] }).entries.length).toBeGreaterThan(5);

    const change = (name: string, value: string) =>
      act('PUT', '/chargers/CP-1/config', { name, value });
    expect(answer(await change(words.heartbeat, '120'))).toMatchObject({
      status: 'Accepted',
      accepted: true,
    });
    const reread = await act('GET', `/chargers/CP-1/config?keys=${words.heartbeat}`);
    expect((reread.body as typeof report).entries[0]?.value).toBe('120');
    expect(answer(await change(words.pingInterval, '30'))).toMatchObject({
      status: 'RebootRequired',
      accepted: true,
    });
    expect(answer(await change(words.heartbeat, 'often')).status).toBe('Rejected');
    expect(answer(await change(words.vendorSetting, '1')).status).toBe(words.unsupportedSetting);

    // The gateway's own settings, and anything off the list, never reach the charger.
    const sampled = cp16or201('MeterValueSampleInterval', 'SampledDataCtrlr.TxUpdatedInterval');
    const managed = await change(sampled, '3600');
    expect(managed.status).toBe(422);
    expect(errorCode(managed)).toBe('config_key_not_allowed');
    const forbidden = await act('PUT', '/chargers/CP-1/config', { name: 'X', value: '1' }, viewer);
    expect(forbidden.status).toBe(403);

    const trail = await auditTrail();
    expect(trail.filter((e) => e.action === 'charger.config.change').map((e) => e.status)).toEqual([
      403, 422, 200, 200, 200, 200,
    ]);
    expect(trail.filter((e) => e.action === 'charger.config.read')).toHaveLength(3);
  });

  const cp16or201 = (v16: string, v201: string) => (words.subprotocol === 'ocpp1.6' ? v16 : v201);

  it('stops a charging session through the charging layer: it settles as any other', async () => {
    const cp = await charger();
    const sessionId = await chargingSession(cp);
    const stopped = cp.waitFor('transactionStopped');
    const res = await act('POST', `/sessions/${sessionId}/stop`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sessionId,
      sessionState: 'stopping',
      status: 'Accepted',
      accepted: true,
      retrying: false,
    });
    await stopped;
    await waitUntil(() => sessionState(sessionId) === 'settled', 5000, 'settlement');
    const row = t.gw.db
      .prepare('SELECT amount, cost, credited FROM sessions WHERE id = ?')
      .get(sessionId) as { amount: number; cost: number; credited: number };
    expect(row.cost + row.credited).toBe(row.amount);
    const events = t.gw.db
      .prepare("SELECT payload FROM outbox WHERE topic = 'sessions' AND payload LIKE ?")
      .all(`%${sessionId}%`) as { payload: string }[];
    expect(events.map((e) => JSON.parse(e.payload) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ state: 'stopping', stoppedBy: 'operator', operator: 'otto' }),
    );
    // The session's story names the operator, not the paid energy.
    const { id: ottoId } = t.gw.db
      .prepare("SELECT id FROM operators WHERE name = 'otto'")
      .get() as {
      id: string;
    };
    const story = (await act('GET', `/sessions/${sessionId}`)).body as {
      stoppedBy: unknown;
      timeline: { kind: string; event: string }[];
    };
    expect(story.stoppedBy).toMatchObject({
      by: 'operator',
      operatorId: ottoId,
      operatorName: 'otto',
    });
    const said = story.timeline.map((e) => e.event).join('\n');
    expect(said).toContain(`operator otto (${ottoId}) stopped the session: stop sent`);
    expect(said).not.toContain('paid energy reached');
    expect(said).toMatch(/settled \(Remote\): stopped by operator otto/);

    const again = await act('POST', `/sessions/${sessionId}/stop`);
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('session_not_stoppable');
    const unknown = await act('POST', '/sessions/no-such-session/stop');
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('session_not_found');
    const trail = await auditTrail();
    expect(trail.filter((e) => e.action === 'session.stop').map((e) => e.status)).toEqual([
      404, 409, 200,
    ]);
  });

  it('an operator stop for a session whose charger is offline changes nothing (503)', async () => {
    const cp = await charger();
    const sessionId = await chargingSession(cp);
    await cp.disconnect();
    await waitUntil(
      async () => (await act('POST', '/chargers/CP-1/reset', { type: 'soft' })).status === 503,
      5000,
      'the gateway to see the charger gone',
    );
    const res = await act('POST', `/sessions/${sessionId}/stop`);
    expect(res.status).toBe(503);
    expect(errorCode(res)).toBe('charger_offline');
    expect(sessionState(sessionId)).toBe('charging');
  });

  it('an offline charger is 503 charger_offline and nothing is queued', async () => {
    for (const [method, path, body] of [
      ['POST', '/chargers/CP-OFF/connectors/1/unlock', undefined],
      ['POST', '/chargers/CP-OFF/reset', { type: 'hard' }],
      ['POST', '/chargers/CP-OFF/availability', { operative: false }],
      ['POST', '/chargers/CP-OFF/trigger', { message: 'status' }],
      ['GET', '/chargers/CP-OFF/config', undefined],
      ['PUT', '/chargers/CP-OFF/config', { name: 'HeartbeatInterval', value: '60' }],
    ] as const) {
      const res = await act(method, path, body);
      expect(res.status, path).toBe(503);
      expect(errorCode(res)).toBe('charger_offline');
    }
    // Nothing was kept for later: the availability intent exists only once a charger took it.
    expect(t.gw.db.prepare('SELECT count(*) AS n FROM operator_availability').get()).toEqual({
      n: 0,
    });
    const trail = await auditTrail();
    expect(trail.filter((e) => e.status === 503)).toHaveLength(6);
  });

  it('a charger that does not answer is 504 charger_timeout', async () => {
    const raw = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, [words.subprotocol]);
    try {
      raw.handle(() => new Promise(() => undefined));
      const res = await act('POST', '/chargers/CP-AC/connectors/1/unlock');
      expect(res.status).toBe(504);
      expect(errorCode(res)).toBe('charger_timeout');
    } finally {
      await raw.close({ force: true });
    }
  });
});

describe('fleet-gateway charger: the CLI through the operator API', () => {
  const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
  let t: TestGateway;
  let cp: SimulatedChargePoint;
  let env: Record<string, string>;

  beforeEach(async () => {
    t = await startTestGateway();
    cp = await bootedCharger(ocpp16, t.gw, 'CP-1');
    env = {
      PATH: process.env.PATH ?? '',
      FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
      FLEET_GATEWAY_OPERATOR_CREDENTIAL: createOperator(t.gw.db, 'otto', 'operator'),
    };
  });
  afterEach(async () => {
    await cp.disconnect();
    await t.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, 'charger', ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('prints the charger’s answer (--json), exits 2 on a refusal and 1 when nothing was delivered', async () => {
    const unlocked = await cli('unlock', 'CP-1', '1', '--json');
    expect(unlocked.code).toBe(0);
    expect(JSON.parse(unlocked.stdout)).toMatchObject({ status: 'Unlocked', accepted: true });

    cp.locks.set(2, 'jammed');
    const jammed = await cli('unlock', 'CP-1', '2');
    expect(jammed.code).toBe(2);
    expect(jammed.stdout).toMatch(/UnlockFailed \(not taken by the charger\)/);

    const off = await cli(
      'availability',
      'CP-1',
      '2',
      '--set',
      'inoperative',
      '--reason',
      'repair',
    );
    expect(off.code).toBe(0);
    expect(
      t.gw.db.prepare('SELECT operative, reason, set_by FROM operator_availability').get(),
    ).toEqual({
      operative: 0,
      reason: 'repair',
      set_by: 'otto',
    });

    const config = await cli('config', 'get', 'CP-1', 'HeartbeatInterval', 'Nope');
    expect(config.code).toBe(0);
    expect(config.stdout).toMatch(/HeartbeatInterval\s+300/);
    expect(config.stdout).toMatch(/unknown: Nope/);

    const offline = await cli('reset', 'CP-OFF', '--hard');
    expect(offline.code).toBe(1);
    expect(offline.stderr).toMatch(/CP-OFF is not connected/);
  });
});
