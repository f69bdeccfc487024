import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LiveMeters } from '../../../src/operator/live-meters.js';
import { RecentCalls } from '../../../src/operator/recent-calls.js';

/**
 * What the console's history holds per charger once full (its last 50 OCPP calls and its
 * transaction's last 120 meter samples), measured in this process: `chargers` histories filled
 * with what the adapters hand over (strings fresh from JSON.parse, as from a frame), the heap
 * and array buffers compared after a full GC before and after. Bytes per charger.
 */
export function fullHistoryBytesPerCharger(chargers: number): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const used = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const calls = new RecentCalls();
  const live = new LiveMeters();
  const before = used();
  const t0 = Date.now();
  for (let i = 0; i < chargers; i++) {
    const chargerId = `CP-${i}`;
    for (let k = 0; k < 120; k++) {
      const [, , action, { timestamp, tx }] = JSON.parse(
        `[2,"${i}-${k}","MeterValues",{"timestamp":"${new Date(t0 + k * 15_000).toISOString()}","tx":"${1_000 + i}"}]`,
      ) as [number, string, string, { timestamp: string; tx: string }];
      live.record({
        chargerId,
        connectorId: '1',
        transactionRef: tx,
        energyWh: 1_000 + k * 37.5,
        powerW: 7_123.4 + k,
        socPercent: k % 100,
        timestamp,
        receivedAtMs: t0 + k * 15_000 + 3,
        time: { stampMs: t0 + k * 15_000, measuredAtMs: t0 + k * 15_000, epoch: 0 },
        live: true,
      });
      calls.record(
        chargerId,
        { action, direction: k % 2 ? 'in' : 'out', outcome: 'ok', seconds: 0.0123 + k / 1000 },
        t0 + k,
      );
    }
  }
  const bytes = (used() - before) / chargers;
  // Held to here: the GC above must not have taken them.
  if (calls.of('CP-0').length !== 50 || live.transaction('CP-0', '1000').length !== 120) {
    throw new Error('console history not full');
  }
  return bytes;
}
