import { rawCharger, type RawClient } from '../../helpers/raw-charger.js';
import { serveParent } from './children.js';
import type { BareChargersReady, BareChargersRequest } from './messages.js';

/**
 * The chargers of the bare Start-life reference (own process, as the gateway's are): bare ocpp-rpc
 * clients, half OCPP 1.6J and half 2.0.1, that answer every call (the remote start) Accepted and
 * do nothing else. Asked again, they tell how many remote starts they answered.
 */
const clients: RawClient[] = [];
let remoteStarts = 0;

serveParent<BareChargersRequest | { stats: true }, BareChargersReady>(async (m) => {
  if ('ocppUrl' in m) {
    for (let i = 0; i < m.chargers; i += 1) {
      const protocol = i % 2 === 0 ? 'ocpp1.6' : 'ocpp2.0.1';
      const client = await rawCharger(m.ocppUrl, `REF-${String(i).padStart(4, '0')}`, undefined, [
        protocol,
      ]);
      client.handle(async () => {
        remoteStarts += 1;
        return { status: 'Accepted' };
      });
      clients.push(client);
    }
  }
  return { connected: clients.length, remoteStarts };
});
