import { setTimeout as sleep } from 'node:timers/promises';
import {
  raw16,
  raw201,
  type RawStation,
  type RemoteStart,
  type StationTx,
} from '../../helpers/raw-stations.js';
import { serveParent } from '../http/children.js';
import type {
  LifeDone,
  SiteReady,
  SiteRequest,
  SiteSent,
  SiteStarted,
  SiteTraffic,
} from './messages.js';

/**
 * The chargers of the disk section (own process): raw-frame OCPP 1.6J and 2.0.1 stations that
 * start a transaction on each remote start (or on their own, for the bare reference server) and
 * keep it open for the site's window, or run one armed session's whole life (samples, stop,
 * Available) and tell the section when it is settled: the stop's answer comes after the
 * settlement's commit (docs/money.md).
 */
interface Site {
  station: RawStation;
  register: { wh: number };
  open: StationTx[];
  life?: { samples: number; sampleMs: number; done(d: LifeDone): void; failed(e: unknown): void };
}

const sites = new Map<string, Site>();
let started = 0;
let firstFailure: string | undefined;

function failed(err: unknown): void {
  firstFailure ??= err instanceof Error ? err.message : String(err);
}

async function begin(site: Site, remote: RemoteStart): Promise<void> {
  site.station.remoteStarts.length = 0;
  site.station.remoteStarts[0] = remote;
  const { tx } = await site.station.start(site.register.wh);
  started += 1;
  const life = site.life;
  site.life = undefined;
  if (!life) {
    site.open.push(tx);
    return;
  }
  try {
    for (let i = 0; i < life.samples; i += 1) {
      await sleep(life.sampleMs);
      site.register.wh += 20;
      await site.station.send(site.station.sample(tx, site.register.wh));
    }
    site.register.wh += 20;
    await site.station.send(site.station.end(tx, site.register.wh));
    await site.station.send(site.station.status(tx.connector, 'Available'));
    life.done({ samples: life.samples });
  } catch (err) {
    life.failed(err);
  }
}

async function connect(req: Extract<SiteRequest, { connect: unknown }>['connect']) {
  const queue = [...req.chargers];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const station = await (c.protocol === '1.6' ? raw16 : raw201).connect(req.ocppUrl, c.id);
      await station.boot();
      const site: Site = { station, register: { wh: 1_000 }, open: [] };
      const remoteStarts = station.remoteStarts;
      // Told of each remote start as the station's handler records it; the transaction begins
      // one macrotask later, after the Accepted answer is on the wire.
      remoteStarts.push = (...items: RemoteStart[]) => {
        for (const remote of items) setImmediate(() => begin(site, remote).catch(failed));
        return remoteStarts.length;
      };
      sites.set(c.id, site);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { connected: sites.size } satisfies SiteReady;
}

/** Each of these chargers starts a transaction on connector 1 itself, its token a constant. */
async function startOwn(chargerIds: string[]): Promise<SiteStarted> {
  await Promise.all(
    chargerIds.map((id) => {
      const site = sites.get(id);
      if (!site) throw new Error(`no charger ${id}`);
      return begin(site, { connector: 1, idToken: 'BENCH-OWN' });
    }),
  );
  if (firstFailure) throw new Error(`site chargers: ${firstFailure}`);
  return { started };
}

/**
 * One window of the site's ordinary hours in real time: each open transaction samples every
 * `sampleSeconds`, each charger heartbeats every `heartbeatSeconds` and repeats its connectors'
 * statuses every `statusSeconds`, each at its own phase spread evenly over its period (no two
 * chargers in step, as on a real site), so the gateway commits them one by one as it would there.
 */
async function window(seconds: number, t: SiteTraffic): Promise<SiteSent> {
  const sent: SiteSent = { samples: 0, heartbeats: 0, statuses: 0 };
  const all = [...sites.values()];
  const txs = all.flatMap((site) => site.open.map((tx) => ({ site, tx })));
  const timers: NodeJS.Timeout[] = [];
  const pending = new Set<Promise<unknown>>();
  const send = (
    station: RawStation,
    frame: Parameters<RawStation['send']>[0],
    count: () => void,
  ) => {
    const p = station.send(frame).then(count, failed);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const every = (periodS: number, phase: number, fire: () => void) => {
    const first = setTimeout(
      () => {
        fire();
        timers.push(setInterval(fire, periodS * 1000));
      },
      phase * periodS * 1000,
    );
    timers.push(first);
  };
  txs.forEach(({ site, tx }, i) =>
    every(t.sampleSeconds, i / txs.length, () => {
      site.register.wh += t.whPerSample;
      send(site.station, site.station.sample(tx, site.register.wh), () => (sent.samples += 1));
    }),
  );
  all.forEach((site, i) => {
    every(t.heartbeatSeconds, i / all.length, () =>
      send(site.station, { action: 'Heartbeat', params: {} }, () => (sent.heartbeats += 1)),
    );
    every(t.statusSeconds, (i + 0.5) / all.length, () => {
      for (const connector of [1, 2]) {
        const charging = site.open.some((tx) => tx.connector === connector);
        send(
          site.station,
          site.station.status(connector, charging ? 'Charging' : 'Available'),
          () => (sent.statuses += 1),
        );
      }
    });
  });
  await sleep(seconds * 1000);
  for (const timer of timers) clearTimeout(timer);
  await Promise.all(pending);
  if (firstFailure) throw new Error(`site chargers: ${firstFailure}`);
  return sent;
}

serveParent<SiteRequest, SiteReady | SiteStarted | SiteSent | LifeDone>(async (m) => {
  if ('connect' in m) return connect(m.connect);
  if ('started' in m) {
    if (firstFailure) throw new Error(`site chargers: ${firstFailure}`);
    return { started };
  }
  if ('window' in m) return window(m.window.seconds, m.window.traffic);
  if ('startOwn' in m) return startOwn(m.startOwn.chargers);
  const site = sites.get(m.life.chargerId);
  if (!site) throw new Error(`no charger ${m.life.chargerId}`);
  const { samples, sampleMs } = m.life;
  return new Promise<LifeDone>((done, fail) => {
    site.life = { samples, sampleMs, done, failed: fail };
  });
});
