import ocppRpc from 'ocpp-rpc';
import type { AddressInfo } from 'node:net';
import { ChargePoint16 } from '../../../simulators/ocpp16/charge-point.js';
import { SiteTrace } from '../../helpers/site-trace.js';
import { WireTap } from '../../helpers/wire-tap.js';

const { RPCServer } = ocppRpc;

interface Peer {
  handle(method: string, handler: () => unknown): void;
  call(method: string, params: unknown): Promise<unknown>;
}

/**
 * The reference for reallocation latency: one SetChargingProfile round trip between a bare
 * ocpp-rpc server and the same simulated 1.6 charger (same time factor) through
 * the same WireTap, measured at the tap exactly as the site run measures the gateway's.
 */
export async function bareProfileRoundTrips(calls: number, timeFactor: number): Promise<number[]> {
  const server = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
  let peer: Peer | undefined;
  server.on('client', (client: Peer) => {
    client.handle('BootNotification', () => ({
      status: 'Accepted',
      currentTime: new Date().toISOString(),
      interval: 300,
    }));
    client.handle('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    client.handle('StatusNotification', () => ({}));
    peer = client;
  });
  const http = await server.listen(0, '127.0.0.1');
  const tap = new WireTap(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/ocpp`);
  await tap.start();
  const trace = new SiteTrace(
    [{ chargerId: 'BARE-1', connectorId: '1', maxW: 22_080, volts: 230, phases: 3 }],
    Number.POSITIVE_INFINITY,
  );
  tap.onFrame((frame) => trace.record(frame));
  const cp = new ChargePoint16({
    url: tap.url,
    identity: 'BARE-1',
    connectors: 1,
    maxPowerW: 22_080,
    timeFactor,
  });
  try {
    await cp.connect();
    if (!peer) throw new Error('bare server: no charger');
    for (let i = 0; i < calls; i++) {
      await peer.call('SetChargingProfile', {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: 70_001,
          stackLevel: 0,
          chargingProfilePurpose: 'TxDefaultProfile',
          chargingProfileKind: 'Relative',
          chargingSchedule: {
            chargingRateUnit: 'A',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: i % 2 === 0 ? 16 : 8 }],
          },
        },
      });
    }
  } finally {
    await cp.disconnect();
    await tap.close();
    await server.close({ force: true });
  }
  return trace.profileRoundTrips.map((r) => r.answeredMs - r.sentMs);
}
