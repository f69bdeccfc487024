import { setTimeout as sleep } from 'node:timers/promises';
import { raw16, raw201, type RawStation, type RemoteStart } from '../../helpers/raw-stations.js';
import { serveParent } from './children.js';
import type { ChargerFleetReady, ChargerFleetRequest, ChargerFleetStats } from './messages.js';

/**
 * The chargers of the Start bench (own process): raw-frame OCPP 1.6J and 2.0.1 stations from
 * test/helpers/raw-stations.ts that accept every remote start at once, start the transaction just
 * after their answer, end it `holdMs` later and report the connector Available again, so the
 * connector is free for a later Start.
 */
const stats: ChargerFleetStats = { remoteStarts: 0, started: 0, ended: 0, failures: 0 };
const stations: RawStation[] = [];

function failed(err: unknown): void {
  stats.failures += 1;
  stats.firstFailure ??= err instanceof Error ? err.message : String(err);
}

async function runTransaction(station: RawStation, remote: RemoteStart, register: { wh: number }) {
  // start() takes the last remote start as the one to begin; concurrent remote starts on the
  // station's two connectors must each begin their own, so the list holds only this one here.
  station.remoteStarts.length = 0;
  station.remoteStarts[0] = remote;
  const { tx } = await station.start(register.wh);
  stats.started += 1;
  await sleep(holdMs);
  register.wh += 25;
  await station.send(station.end(tx, register.wh));
  await station.send(station.status(tx.connector, 'Available'));
  stats.ended += 1;
}

let holdMs = 0;

async function connect(req: ChargerFleetRequest): Promise<ChargerFleetReady> {
  holdMs = req.holdMs;
  // A few at a time: the bench measures Starts, not a connection storm.
  const queue = [...req.chargers];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const station = await (c.protocol === '1.6' ? raw16 : raw201).connect(req.ocppUrl, c.id);
      await station.boot();
      const register = { wh: 1_000 };
      const remoteStarts = station.remoteStarts;
      // Told of each remote start as the station's handler records it; the transaction begins
      // one macrotask later, after the Accepted answer is on the wire.
      remoteStarts.push = (...items: RemoteStart[]) => {
        for (const remote of items) {
          stats.remoteStarts += 1;
          setImmediate(() => runTransaction(station, remote, register).catch(failed));
        }
        return remoteStarts.length;
      };
      stations.push(station);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { connected: stations.length };
}

serveParent<{ connect?: ChargerFleetRequest; stats?: true }, ChargerFleetReady | ChargerFleetStats>(
  async (m) => (m.connect ? connect(m.connect) : { ...stats }),
);
