import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ScreenEvent } from '../simulators/shared/events.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  ocpp201,
  type ProtocolUnderTest,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The bundled simulators as drivers' displays (personality cost-screen): a paid app session on
 * each protocol shows what was paid, the running cost and the settled cost; the same simulator
 * without the personality is told nothing.
 */

const WHERE: Record<string, string[]> = {
  [ocpp16.name]: ['SetUserPrice', 'RunningCost', 'FinalCost'],
  [ocpp201.name]: ['personalMessage', 'SetDisplayMessage', 'totalCost'],
};

describe.each([ocpp16, ocpp201])('the simulators show the driver: $name', (protocol) => {
  let t: TestGateway;
  const chargers: SimulatedChargePoint[] = [];
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((cp) => cp.disconnect()));
  });
  afterAll(async () => {
    await t.close();
  });

  async function paidSession(p: ProtocolUnderTest, personality: string[]) {
    const cp = await bootedCharger(p, t.gw, 'CP-1', { personality });
    chargers.push(cp);
    const shown: ScreenEvent[] = [];
    cp.on('screen', (e) => shown.push(e));
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1_000,
    );
    expect(res.status).toBe(200);
    const sessionId = (res.body as { sessionId: string }).sessionId;
    const settled = () =>
      (
        t.gw.db.prepare('SELECT state, cost FROM sessions WHERE id = ?').get(sessionId) as {
          state: string;
          cost: number | null;
        }
      ).state === 'settled';
    await waitUntil(() => settled() || undefined, 15_000, 'settlement');
    const { cost } = t.gw.db.prepare('SELECT cost FROM sessions WHERE id = ?').get(sessionId) as {
      cost: number;
    };
    return { shown, cost };
  }

  it('a cost-screen simulator shows the paid amount, the running cost and the settled cost', async () => {
    const { shown, cost } = await paidSession(protocol, ['cost-screen']);
    await waitUntil(
      () => shown.some((e) => e.text?.startsWith('Total NGN')) || undefined,
      5000,
      'the final cost on the screen',
    );
    expect(new Set(shown.map((e) => e.via))).toEqual(new Set(WHERE[protocol.name]));
    expect(shown.find((e) => e.text?.startsWith('Paid NGN 1,000 for up to 2.4 kWh'))).toBeDefined();
    // The running cost: a text (2.0.1) or a RunningCost figure (1.6), below the final cost.
    const running = shown.filter((e) => e.text?.startsWith('Used NGN') || e.via === 'RunningCost');
    expect(running.length).toBeGreaterThan(0);
    const final = shown.find((e) => e.text?.startsWith('Total NGN'));
    expect(final?.cost).toBe(cost);
    expect(final?.text).toContain(`Total NGN ${cost.toLocaleString('en-US')} for`);
  });

  it('the same simulator without the personality is told nothing', async () => {
    const { shown } = await paidSession(protocol, []);
    await new Promise((r) => setTimeout(r, 300));
    expect(shown).toEqual([]);
  });
});
