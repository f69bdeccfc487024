import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/read-config.js';
import { startGateway } from '../src/gateway.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode, mintToken, startSession } from './helpers/http.js';
import { ocpp16, type SimulatedChargePoint } from './helpers/simulated-charger.js';

let t: TestGateway | undefined;
let cp: SimulatedChargePoint | undefined;
afterEach(async () => {
  await cp?.disconnect();
  await t?.close();
  t = undefined;
  cp = undefined;
});

describe('drain (in process)', () => {
  it('gives up after its timeout with the sessions still open, keeps refusing Starts until closed, and the next start-up picks them up', async () => {
    // Long enough that the session cannot time out during the test, however slow the machine.
    t = await startTestGateway({
      sessions: { startTimeoutSeconds: 600, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
    // A session the charger accepted but never started: open until its start timeout.
    cp = await ocpp16.connect(t.gw.ocppUrl, 'CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1000,
    );
    expect(started.status).toBe(200);
    const { sessionId } = started.body as { sessionId: string };

    expect(t.gw.drainStatus().state).toBe('running');
    const result = await t.gw.drain({ timeoutSeconds: 0.2 });
    expect(result.drained).toBe(false);
    expect(result.openSessions.map((s) => s.sessionId)).toEqual([sessionId]);
    expect(t.logLines.some((l) => l.includes('drain timed out: 1 sessions still open'))).toBe(true);
    expect(t.gw.drainStatus()).toMatchObject({ state: 'draining' });

    const again = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.ada.email },
      1000,
    );
    expect(again.status).toBe(503);
    expect(errorCode(again)).toBe('gateway_draining');

    // a restart takes Starts again and still holds the open session
    await t.restart();
    expect(t.gw.drainStatus()).toMatchObject({
      state: 'running',
      openSessions: [expect.objectContaining({ sessionId })],
    });
  });

  it('a second gateway in the same process on the same database is refused too', async () => {
    t = await startTestGateway();
    const config = parseConfig(t.configInput, t.dir);
    await expect(startGateway(config)).rejects.toThrow(
      `is in use by another gateway (pid ${process.pid}`,
    );
  });
});
