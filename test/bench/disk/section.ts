import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { bearer, mintToken, post } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';
import { forkChild, unwrap, type Child } from '../http/children.js';
import { stopAll } from '../http/site.js';
import { API_KEY, driverEmail, startGatewayChild } from '../lib/gateway-child.js';
import type { BenchSection, Figure } from '../lib/results.js';
import { comparedRounds, measuredRounds, withGoal } from '../lib/results.js';
import { formatNumber } from '../lib/report.js';
import { cpuSeconds, cpuSecondsByThread, threadShares } from '../lib/stats.js';
import { BareServerChild } from '../ocpp/children.js';
import { writeBytes } from './io.js';
import type {
  BareRequest,
  BareResult,
  LifeDone,
  SiteReady,
  SiteRequest,
  SiteSent,
  SiteStarted,
  SiteTraffic,
} from './messages.js';
import { walPages, walSummary } from './wal-pages.js';

const CHARGERS = 100;
const CHARGING = 30;
const KB = 1024;
/** A site's ordinary hours: samples every 10 s, the gateway's default heartbeat, statuses repeated. */
const TRAFFIC: SiteTraffic = {
  sampleSeconds: 10,
  heartbeatSeconds: 300,
  statusSeconds: 300,
  whPerSample: 20,
};
/** A session's life: Start, the transaction's start, these samples, the stop, settlement. */
const LIFE_SAMPLES = 6;
const LIFE_SAMPLE_MS = 1_000;
const AMOUNT = 100_000;

type SiteChild = Child<SiteReady | SiteStarted | SiteSent | LifeDone | { error: string }>;

/**
 * What the gateway writes to the disk, from its own I/O counters (io.ts): per meter sample at a
 * 100-charger site in its ordinary hours, per day there, and per session's whole life; against the
 * sample's own write on bare better-sqlite3 (bare-samples.ts) running the same schedule at the
 * same time. And the gateway's CPU in those hours against bare ocpp-rpc writing each sample
 * (../ocpp/bare-server.ts) with the same traffic at the same time. Real time throughout: how many
 * writes share a page before the kernel writes it back depends on their pace, so a site sped up
 * would show fewer bytes than a real one writes.
 *   BENCH_DISK_CPU_PROF=dir   the gateway and the bare server write CPU profiles of the windows
 *                             there (gateway-*.cpuprofile, bare-written-*.cpuprofile)
 */
export const diskSection: BenchSection = {
  key: 'disk',
  title: 'A site’s ordinary hours: bytes written to the disk, CPU',
  async run(ctx) {
    const started: { stop(): Promise<void> }[] = [];
    const profileDir = process.env.BENCH_DISK_CPU_PROF;
    // Both servers profiled over the same windows (SIGUSR2 starts and writes the profile).
    const profiled = (name: string): Record<string, string> =>
      profileDir
        ? {
            NODE_OPTIONS: `--import=${new URL('../ocpp/cpu-profile-preload.js', import.meta.url).href}`,
            BENCH_CPU_PROF_DIR: profileDir,
            BENCH_CPU_PROF_NAME: name,
          }
        : {};
    try {
      const chargerIds = Array.from(
        { length: CHARGERS },
        (_, i) => `CP-${String(i).padStart(4, '0')}`,
      );
      const lives = Math.max(2, Math.round(6 * ctx.scale));
      const gw = await startGatewayChild(
        ctx.tempDir(),
        {
          chargers: chargerIds,
          connectors: 2,
          drivers: CHARGING + lives,
          balance: 100_000_000,
        },
        {},
        profiled('gateway'),
      );
      started.push(gw);
      const site = await connectSite(gw.ocppUrl, chargerIds, started);
      const ask = site.ask;
      const tokens: string[] = [];
      for (let i = 0; i < CHARGING + lives; i += 1)
        tokens.push(await mintToken(gw.url, API_KEY, driverEmail(i)));
      const start = async (driver: number, chargerId: string) => {
        const res = await post(
          gw.url,
          '/v1/sessions',
          { chargerId, connectorId: '1', driverEmail: driverEmail(driver), amount: AMOUNT },
          bearer(tokens[driver] as string),
        );
        if (res.status !== 201 && res.status !== 200)
          throw new Error(`Start on ${chargerId}: ${res.status} ${JSON.stringify(res.body)}`);
      };
      // Let the boot's settings and statuses land before anything is counted.
      await sleep(2_000);

      // A session's whole life, one at a time on an otherwise quiet site.
      const lifeBytes: number[] = [];
      let lifeWal = '';
      for (let i = 0; i < lives; i += 1) {
        const chargerId = chargerIds[CHARGING + i] as string;
        const mark = walPages(gw.dbPath).mark;
        const before = writeBytes(gw.pid);
        site.child.send({ life: { chargerId, samples: LIFE_SAMPLES, sampleMs: LIFE_SAMPLE_MS } });
        await start(CHARGING + i, chargerId);
        unwrap(await site.child.next(60_000));
        // The gateway's own sync of what waited for one comes within 20 ms (durability.ts).
        await sleep(200);
        lifeBytes.push(writeBytes(gw.pid) - before);
        lifeWal = walSummary(gw.dbPath, mark);
        ctx.log(`life ${i + 1}: ${lifeWal}`);
      }
      ctx.log(`${lives} session lives: ${lifeBytes.map((b) => Math.round(b / KB)).join(', ')} KB`);

      // The site's ordinary hours: 30 sessions charging, every charger heartbeating.
      for (let i = 0; i < CHARGING; i += 1) await start(i, chargerIds[i] as string);
      await waitUntil(
        async () => (await ask<SiteStarted>({ started: true })).started >= CHARGING + lives,
        30_000,
        'the site transactions to start',
      );
      // The CPU reference: bare ocpp-rpc writing each sample, the same site's traffic from its own
      // chargers, the same sessions charging (started by the chargers, as it sends no remote start).
      const refDb = join(ctx.tempDir(), 'reference.db');
      const ref = await BareServerChild.start(profiled('bare-written'), refDb);
      started.push({ stop: () => ref.kill() });
      const refSite = await connectSite(ref.ocppUrl, chargerIds, started);
      await refSite.ask<SiteStarted>({ startOwn: { chargers: chargerIds.slice(0, CHARGING) } });
      await sleep(2_000);
      const bare = forkChild<BareResult | { error: string }>('../disk/bare-samples.js');
      started.push(bare);
      const bareDir = ctx.tempDir();
      const seconds = ctx.window(60);
      const rounds = ctx.rounds(3);
      const perSample: number[] = [];
      const barePerSample: number[] = [];
      const perDay: number[] = [];
      const barePerDay: number[] = [];
      let samplesSent = 0;
      let refSamplesSent = 0;
      const cpu: number[] = [];
      const refCpu: number[] = [];
      let windowWal = '';
      const rss: number[] = [];
      // Each process's CPU by thread over all windows: its JavaScript (main) told from its GC.
      const threadsAt = async () =>
        Promise.all([cpuSecondsByThread(gw.pid), cpuSecondsByThread(ref.pid)]);
      const toggleProfiles = async () => {
        if (!profileDir) return;
        for (const pid of [gw.pid, ref.pid]) process.kill(pid, 'SIGUSR2');
        await sleep(3_000); // the second signal's profile is written before the servers stop
      };
      await toggleProfiles();
      const threadsBefore = await threadsAt();
      const windowsT0 = performance.now();
      for (let r = 0; r < rounds; r += 1) {
        const req: BareRequest = {
          dbPath: join(bareDir, `bare-${r}.db`),
          sessions: CHARGING,
          seconds,
          traffic: TRAFFIC,
        };
        bare.send(req);
        const mark = walPages(gw.dbPath).mark;
        const before = writeBytes(gw.pid);
        const cpuBefore = [await cpuSeconds(gw.pid), await cpuSeconds(ref.pid)];
        const t0 = performance.now();
        const window = { window: { seconds, traffic: TRAFFIC } };
        const [sent, refSent] = await Promise.all([
          ask<SiteSent>(window, seconds * 1000 + 60_000),
          refSite.ask<SiteSent>(window, seconds * 1000 + 60_000),
        ]);
        const cores = (used: number) => (used / ((performance.now() - t0) / 1000)) * 100;
        cpu.push(cores((await cpuSeconds(gw.pid)) - (cpuBefore[0] ?? 0)));
        refCpu.push(cores((await cpuSeconds(ref.pid)) - (cpuBefore[1] ?? 0)));
        refSamplesSent += refSent.samples;
        const bytes = writeBytes(gw.pid) - before;
        rss.push((await gw.rss()) / 2 ** 20);
        windowWal = walSummary(gw.dbPath, mark);
        const bareWrote = unwrap(await bare.next(seconds * 1000 + 60_000));
        if (bareWrote.writeBytes === 0) {
          throw new Error(
            `the bare reference wrote 0 bytes to ${bareDir}: a tmpfs counts no writes; ` +
              'set TMPDIR to a folder on the disk',
          );
        }
        samplesSent += sent.samples;
        perSample.push(bytes / sent.samples / KB);
        barePerSample.push(bareWrote.writeBytes / bareWrote.samples / KB);
        perDay.push(((bytes / seconds) * 86_400) / 1e6);
        barePerDay.push(((bareWrote.writeBytes / seconds) * 86_400) / 1e6);
        ctx.log(
          `round ${r + 1}: ${sent.samples} samples, ${sent.heartbeats} heartbeats, ` +
            `${sent.statuses} statuses: ${bytes} bytes, ${formatNumber(cpu.at(-1) ?? Number.NaN)} % of a core; ` +
            `bare ${bareWrote.samples} samples ${bareWrote.writeBytes} bytes; bare ocpp-rpc ` +
            `${refSent.samples} samples, ${formatNumber(refCpu.at(-1) ?? Number.NaN)} % of a core`,
        );
      }
      const threadsAfter = await threadsAt();
      await toggleProfiles();
      const windowsSeconds = (performance.now() - windowsT0) / 1000;
      const byThread = (i: 0 | 1) =>
        threadShares(threadsBefore[i], threadsAfter[i], windowsSeconds)
          .map(([name, pct]) => `${name} ${formatNumber(pct)} %`)
          .join(', ');
      verifyStored(gw.dbPath, CHARGING, samplesSent * TRAFFIC.whPerSample);
      verifyStored(refDb, CHARGING, refSamplesSent * TRAFFIC.whPerSample);

      const figures: Figure[] = [
        withGoal(
          comparedRounds('bytes written per meter sample, 100-charger site', 'KB', perSample, {
            label: 'the sample’s write on bare better-sqlite3',
            rounds: barePerSample,
          }),
          'at most',
          2,
        ),
        comparedRounds('bytes written a day, 100 chargers, 30 charging', 'MB', perDay, {
          label: 'the samples’ writes on bare better-sqlite3',
          rounds: barePerDay,
        }),
        withGoal(
          measuredRounds('gateway CPU at the site’s ordinary hours', '% of a core', cpu),
          'at most',
          2,
        ),
        comparedRounds(
          'gateway CPU at the site’s ordinary hours, against the bare server',
          '% of a core',
          cpu,
          { label: 'bare ocpp-rpc writing each sample', rounds: refCpu },
          { ratio: 1.5, direction: 'at most' },
        ),
        measuredRounds('gateway RSS at the site’s ordinary hours, end of each window', 'MiB', rss),
        measuredRounds(
          `bytes written per session's whole life (${LIFE_SAMPLES} samples)`,
          'KB',
          lifeBytes.map((b) => b / KB),
        ),
      ];
      return {
        figures,
        notes: [
          `${CHARGERS} raw-frame chargers (half 1.6J, half 2.0.1, 2 connectors each) in their own process; ` +
            `${CHARGING} sessions charging, a sample every ${TRAFFIC.sampleSeconds} s each, every charger ` +
            `heartbeating every ${TRAFFIC.heartbeatSeconds} s and repeating its connectors' statuses every ` +
            `${TRAFFIC.statusSeconds} s, each on its own phase; ${rounds} window(s) of ${seconds} s in real time.`,
          'Bytes are the gateway process’s own write_bytes (/proc/<pid>/io: pages it dirtied in the database, ' +
            'its WAL, its shared-memory index and checkpoint copies, counted per 4 KiB page cache page); ' +
            'per sample is every byte of the window (heartbeats and statuses included) over the samples; KB = 1,024 bytes, MB = 10^6 bytes.',
          'Reference: the same register update of the session row, each committed alone at synchronous=NORMAL ' +
            '(the relaxed tier a sample commits at) on bare better-sqlite3 with the gateway’s schema, on the same ' +
            'schedule in its own process at the same time.',
          `A session's whole life: Start over HTTP, the charger's transaction start, ${LIFE_SAMPLES} samples ` +
            `${LIFE_SAMPLE_MS} ms apart, the stop, Available; ${lives} one after another on a quiet site.`,
          'CPU: utime + stime of the gateway process (/proc/<pid>/stat, 10 ms ticks) over each window, as % of ' +
            'one core. Reference, at the same time on the same schedule: bare ocpp-rpc writing each sample ' +
            '(test/bench/ocpp/bare-server.ts with a database: each sample’s register update committed at ' +
            'synchronous=NORMAL before its answer, the sessions’ rows opened by their transaction starts) with ' +
            `the same ${CHARGERS} chargers' traffic from its own charger process, ${CHARGING} sessions charging ` +
            'that the chargers started themselves; its CPU measured the same way. Every sample’s energy is checked ' +
            'in its rows as in the gateway’s.',
          `CPU by thread over the ${rounds} windows (% of one core; main is the JavaScript thread, ` +
            `V8Worker V8's garbage collection and compiler helpers): gateway ${byThread(0)}; ` +
            `bare ocpp-rpc writing each sample ${byThread(1)}.`,
          `The gateway's WAL in the last window: ${windowWal}; in the last session's life: ${lifeWal}.`,
        ],
      };
    } finally {
      await stopAll(started);
    }
  },
};

/** The site's chargers in their own process, connected to `ocppUrl` and booted. */
async function connectSite(
  ocppUrl: string,
  chargerIds: string[],
  started: { stop(): Promise<void> }[],
): Promise<{ child: SiteChild; ask<T>(m: SiteRequest, timeoutMs?: number): Promise<T> }> {
  const child: SiteChild = forkChild('../disk/site-chargers.js');
  started.push(child);
  const ask = async <T>(m: SiteRequest, timeoutMs?: number): Promise<T> => {
    child.send(m);
    return unwrap(await child.next(timeoutMs)) as T;
  };
  const ready = await ask<SiteReady>({
    connect: {
      ocppUrl,
      chargers: chargerIds.map((id, i) => ({ id, protocol: i % 2 === 0 ? '1.6' : '2.0.1' })),
    },
  });
  if (ready.connected !== CHARGERS) throw new Error(`${ready.connected} chargers connected`);
  return { child, ask };
}

/** The bench stops unless every sample's energy is in the session rows. */
function verifyStored(dbPath: string, sessions: number, sentWh: number): void {
  const db = new Database(dbPath, { readonly: true });
  try {
    const row = db
      .prepare<[], { n: number; wh: number }>(
        `SELECT count(*) AS n, sum(last_meter_wh - meter_start_wh) AS wh FROM sessions
          WHERE state = 'charging'`,
      )
      .get();
    if (row?.n !== sessions || row.wh !== sentWh) {
      throw new Error(
        `stored ${row?.wh} Wh in ${row?.n} charging sessions, the chargers sent ${sentWh} Wh in ${sessions}`,
      );
    }
  } finally {
    db.close();
  }
}
