import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  comparedRounds,
  measuredRounds,
  withGoal,
  type BenchSection,
  type Figure,
} from '../lib/results.js';
import { formatNumber, formatSpread } from '../lib/report.js';
import { cpuSeconds, spreadOf } from '../lib/stats.js';
import { forkChild, unwrap } from './children.js';
import type { LoadResult, LoadTarget, RawDebitResult } from './messages.js';
import {
  connectorTargets,
  load,
  onlyPlanned,
  startBareApi,
  startBareLife,
  startSite,
  stopAll,
  type LoadChild,
} from './site.js';

const CONCURRENCY = [1, 10, 100];
const AMOUNT = 500;
/** 300 connectors: at the rates seen here a connector comes round again ~1 s after its last Start. */
const CHARGERS = 150;
const DRIVERS = 100;
/** How long each transaction runs before its charger ends it. */
const HOLD_MS = 50;
/** Seconds per round (before BENCH_SCALE): each concurrency on the gateway, on the bare route, the raw debit. */
const GATEWAY_S = 3;
const BARE_S = 1;
const RAW_S = 2;
/** Seconds per concurrency and round (before BENCH_SCALE) of the bare parts doing a Start's whole life. */
const LIFE_S = 1;
/** Issue 39's goal: a Start's whole life ≤ 1.5× the CPU of the bare parts doing the same durable work. */
const LIFE_GOAL = 1.5;
/** Issue 30's goals: Starts/s against the raw debit at 10 and 100 connections (ratio of medians). */
const RATE_GOALS = new Map([
  [10, 0.5],
  [100, 1],
]);
/** Issue 30's goals for a Start's latency, ms. */
const LATENCY_GOALS = new Map<number, { p50?: number; p99?: number }>([
  [1, { p50: 1.5, p99: 5 }],
  [100, { p99: 100 }],
]);

/**
 * Issue 7 part 2, the money path: Start Charge Session end to end (HTTP, debit transaction, remote
 * start to a charger that accepts at once, response) against the raw debit transaction and a bare
 * fastify route with the same schema, all in the same run.
 */
export const startSection: BenchSection = {
  key: 'start',
  title: 'Money path: Start Charge Session',
  async run(ctx) {
    const started: { stop(): Promise<void> }[] = [];
    const rawChild = forkChild<RawDebitResult | { error: string }>('raw-debit.js');
    try {
      const rawCpu: number[] = [];
      const rawDebit = async (seconds: number) => {
        const dbPath = join(ctx.tempDir(), 'raw.db');
        const before = await cpuSeconds(pidOf(rawChild.proc.pid));
        rawChild.send({ dbPath, seconds, drivers: DRIVERS, amount: AMOUNT });
        const result = unwrap(await rawChild.next());
        const used = (await cpuSeconds(pidOf(rawChild.proc.pid))) - before;
        rawCpu.push((used * 1e6) / Math.max(1, result.transactions));
        return result;
      };
      const site = await startSite(
        ctx,
        { chargers: CHARGERS, drivers: DRIVERS, holdMs: HOLD_MS },
        started,
      );
      const targets = connectorTargets(site, (t) => ({ ...t, amount: AMOUNT }));
      const gen: LoadChild = forkChild('load.js');
      started.push(gen);
      // Every server up throughout, measured in turns: adjacent windows see the same machine.
      const bare = await startBareApi(started);
      const bareGen: LoadChild = forkChild('load.js');
      started.push(bareGen);
      // One bare charger per Start in flight at the highest concurrency: ocpp-rpc sends one call
      // at a time to a charger, as the gateway does.
      const life = await startBareLife(
        {
          dbPath: join(ctx.tempDir(), 'life.db'),
          drivers: DRIVERS,
          amount: AMOUNT,
          chargers: Math.max(...CONCURRENCY),
        },
        started,
      );
      const lifeCpu = new Map<number, number[]>(CONCURRENCY.map((c) => [c, []]));
      let lives = 0;
      /** The bare parts' Starts at `connections` in flight; `counted`: its CPU per Start kept. */
      const bareLife = async (connections: number, seconds: number, counted = true) => {
        const before = await cpuSeconds(life.pid);
        const r = await life.run(connections, seconds);
        const used = (await cpuSeconds(life.pid)) - before;
        lives += r.lives;
        // No Start made is no figure (a round's median leaves it out), not the CPU of none.
        if (counted)
          lifeCpu.get(connections)?.push(r.lives > 0 ? (used * 1e6) / r.lives : Number.NaN);
        return r;
      };
      let offset = 0;
      // CPU of each process per Start made, over a round's window and the settling after it: the
      // three share the machine's cores, so together they bound the Starts/s one machine can show.
      const processes = {
        gateway: site.gw.pid,
        chargers: pidOf(site.fleet.proc.pid),
        'load generator': pidOf(gen.proc.pid),
      };
      const cpuRuns = new Map<number, CpuPerStart[]>(CONCURRENCY.map((c) => [c, []]));
      const cpuNow = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.entries(processes).map(async ([k, pid]) => [k, await cpuSeconds(pid)] as const),
          ),
        );
      const gateway = async (
        connections: number,
        seconds: number,
        counted?: { amount: number; targets: LoadTarget[] },
      ) => {
        const cpuBefore = await cpuNow();
        const wallFrom = performance.now();
        const r = await load(gen, {
          url: site.gw.url,
          path: '/v1/sessions',
          connections,
          seconds,
          targets: counted?.targets ?? targets,
          offset: counted ? 0 : offset,
          ...(counted && { amount: counted.amount }),
        });
        if (!counted) offset = r.nextOffset;
        onlyPlanned(`Start at ${connections} connections`, r, ['connector_unavailable']);
        const fleet = await site.quiet();
        if (fleet.failures > 0) throw new Error(`charger frames failed: ${fleet.firstFailure}`);
        if (!counted) {
          const cpuAfter = await cpuNow();
          const wallS = (performance.now() - wallFrom) / 1000;
          const micros = (k: string) =>
            r.ok > 0 ? (((cpuAfter[k] ?? 0) - (cpuBefore[k] ?? 0)) * 1e6) / r.ok : Number.NaN;
          const perStart = Object.fromEntries(Object.keys(processes).map((k) => [k, micros(k)]));
          const total = Object.values(perStart).reduce((a, b) => a + b, 0);
          cpuRuns.get(connections)?.push({ perStart, cores: (total * r.ok) / 1e6 / wallS });
        }
        return r;
      };
      const bareRoute = async (connections: number, seconds: number) => {
        const r = await load(bareGen, {
          url: bare.url,
          path: '/v1/sessions',
          connections,
          seconds,
          targets,
          offset: 0,
        });
        onlyPlanned(`bare route at ${connections} connections`, r);
        return r;
      };

      ctx.log('warm-up: gateway, bare fastify route, raw debit transaction');
      await gateway(10, ctx.window(2));
      await bareRoute(10, 1);
      await rawDebit(1);
      await bareLife(10, 1, false);
      // The warm-up's CPU is not a round's.
      for (const runs of cpuRuns.values()) runs.length = 0;
      const ROUNDS = ctx.rounds(3);
      const measured = new Map<number, LoadResult[]>(CONCURRENCY.map((c) => [c, []]));
      const bareRuns = new Map<number, LoadResult[]>(CONCURRENCY.map((c) => [c, []]));
      const debits: RawDebitResult[] = [];
      // Each round: the gateway then the bare route at each concurrency, then the raw debit.
      for (let round = 0; round < ROUNDS; round++) {
        ctx.log(
          `round ${round + 1} of ${ROUNDS}: gateway and bare route at ${CONCURRENCY.join(', ')} connections, raw debit, bare Start lives`,
        );
        for (const c of CONCURRENCY) {
          measured.get(c)?.push(await gateway(c, ctx.window(GATEWAY_S)));
          bareRuns.get(c)?.push(await bareRoute(c, ctx.window(BARE_S)));
        }
        debits.push(await rawDebit(ctx.window(RAW_S)));
        for (const c of CONCURRENCY) await bareLife(c, ctx.window(LIFE_S));
      }
      const answered = await life.remoteStarts();
      if (answered < lives)
        throw new Error(`the bare chargers answered ${answered} remote starts for ${lives} Starts`);
      ctx.log('counting fsyncs per Start (strace)');
      // Even-numbered chargers speak 1.6J, odd ones 2.0.1; targets alternate charger by charger.
      const fsyncs = {
        v16: await fsyncsPerStart(site.gw.pid, () =>
          gateway(1, 60, { amount: 40, targets: targets.filter((_, k) => k % 2 === 0) }),
        ),
        v201: await fsyncsPerStart(site.gw.pid, () =>
          gateway(1, 60, { amount: 40, targets: targets.filter((_, k) => k % 2 === 1) }),
        ),
      };
      site.verifyMoney();
      const fleet = await site.chargerStats();

      const figures: Figure[] = [];
      const rawRef = { label: 'raw debit tx/s', rounds: debits.map((d) => d.perSecond) };
      for (const c of CONCURRENCY) {
        const g = measured.get(c) ?? [];
        const b = bareRuns.get(c) ?? [];
        const pick = (runs: LoadResult[], k: 'okPerSecond' | 'p50' | 'p99') =>
          runs.map((r) => r[k]);
        const refused = g.reduce((n, r) => n + (r.codes.connector_unavailable ?? 0), 0);
        const goal = RATE_GOALS.get(c);
        const vsRaw = comparedRounds(
          `Starts/s, ${c} connections`,
          'sessions/s',
          pick(g, 'okPerSecond'),
          rawRef,
          goal === undefined ? undefined : { ratio: goal, direction: 'at least' },
        );
        if (refused > 0)
          vsRaw.note = `${refused} of ${g.reduce((n, r) => n + r.responses, 0)} refused 409 connector_unavailable, not counted`;
        figures.push(vsRaw);
        figures.push(
          comparedRounds(`Starts/s, ${c} connections`, 'sessions/s', pick(g, 'okPerSecond'), {
            label: 'bare route req/s',
            rounds: pick(b, 'okPerSecond'),
          }),
        );
        const p50 = comparedRounds(`Start p50, ${c} connections`, 'ms', pick(g, 'p50'), {
          label: 'bare route p50',
          rounds: pick(b, 'p50'),
        });
        const p99 = comparedRounds(`Start p99, ${c} connections`, 'ms', pick(g, 'p99'), {
          label: 'bare route p99',
          rounds: pick(b, 'p99'),
        });
        // Issue 30's latency goals are absolute: at 1 connection p50 and p99, at 100 the p99.
        const latency = LATENCY_GOALS.get(c);
        figures.push(latency?.p50 ? withGoal(p50, 'at most', latency.p50) : p50);
        figures.push(latency?.p99 ? withGoal(p99, 'at most', latency.p99) : p99);
      }
      // A Start's whole life in the gateway's own process against the bare parts' process doing its
      // durable work: the chargers and the load generator are apart on both sides.
      for (const c of CONCURRENCY) {
        figures.push(
          comparedRounds(
            `CPU per Start's whole life (server process), ${c} connections`,
            'µs',
            (cpuRuns.get(c) ?? []).map((r) => r.perStart.gateway ?? Number.NaN),
            { label: 'bare parts, the same durable work', rounds: lifeCpu.get(c) ?? [] },
            { ratio: LIFE_GOAL, direction: 'at most' },
          ),
        );
      }
      const debitP99 = spreadOf(debits.map((d) => d.p99));
      figures.push({
        ...measuredRounds(
          'raw debit transaction p50',
          'ms',
          debits.map((d) => d.p50),
        ),
        note: `p99 ${formatSpread(debitP99.median, debitP99)} ms`,
      });
      const transactions = debits.reduce((n, d) => n + d.transactions, 0);
      const cpuNote = CONCURRENCY.map((c) => {
        const runs = cpuRuns.get(c) ?? [];
        const median = (pick: (r: CpuPerStart) => number) => spreadOf(runs.map(pick)).median;
        const each = Object.keys(processes)
          .map((k) => `${k} ${formatNumber(median((r) => r.perStart[k] ?? 0))}`)
          .join(', ');
        return `at ${c}: ${each} µs (${formatNumber(median((r) => r.cores))} of the machine's cores busy)`;
      }).join('; ');

      const notes = [
        `Gateway: \`dist/cli.js serve\` child, ${CHARGERS} raw-frame chargers (half OCPP 1.6J, half 2.0.1, 2 connectors each) in a second child that accepts every remote start at once, starts the transaction, ends it ${HOLD_MS} ms later and reports the connector Available; ${DRIVERS} drivers with tokens minted over HTTP. Load: autocannon (third child), POST /v1/sessions of ${AMOUNT} NGN, each request naming the next connector round-robin, ${ctx.window(2)} s of warm-up, then ${ROUNDS} rounds of ${ctx.window(GATEWAY_S)} s per concurrency; latency over every reply of a round.`,
        `References in the same run: the same body against bare fastify with the route's own schema (src/api/schemas.ts) answering a constant (own child and generator, ${ctx.window(BARE_S)} s per concurrency and round); the debit transaction of Charging.debit (session row, balance check, ledger entry with its wallet trigger, two outbox rows) as plain prepared statements in one better-sqlite3 transaction, WAL + synchronous=FULL, same schema, own child, one ${ctx.window(RAW_S)} s loop per round on a fresh file: ${formatNumber(transactions)} transactions. SQLite runs one write transaction at a time, so that loop is the ceiling at every concurrency. Every server is up throughout; each round runs the gateway then the bare route at 1, 10 and 100 connections, then the raw debit, so that a drift of the shared machine falls on both sides; each figure is the median of its rounds.`,
        "Per Start the gateway also does what the raw debit does not: the token check (one SHA-256, then a cached verification or a SQLite read), connector and open-session reads, the remote-start round trip over OCPP and, concurrently, the charger's start, stop (settlement with its shortfall credit) and status messages. A Start's life takes 4 commits with OCPP 1.6J (debit; authorized on the charger's Accepted; StartTransaction; StopTransaction with the settlement) and 4 with 2.0.1 (TransactionEvent Started and Ended instead of Start/Stop), against 1 for the raw debit; 2 of them are inside the HTTP request. Each goes through the group commit (src/store/group-commit.ts): the commits that arrive in the same event-loop turn, from any request or charger, share one SQLite transaction and one fsync, so at 1 connection there is little to share and at 100 a batch holds many. Statuses, meter samples and the 2.0.1 remote-start row commit without an fsync (relaxed, src/store/durability.ts).",
        fsyncs.v16 === undefined || fsyncs.v201 === undefined
          ? 'fsyncs per Start: not measured (strace unavailable).'
          : `fsyncs per Start (strace -c -w on the gateway while 40 Starts are made at 1 connection and settle, per protocol): ${formatNumber(fsyncs.v16.perStart)} with 1.6J, ${formatNumber(fsyncs.v201.perStart)} with 2.0.1, the gateway blocked in them ${formatNumber(fsyncs.v16.msPerStart)} / ${formatNumber(fsyncs.v201.msPerStart)} ms per Start (at ${formatNumber(fsyncs.v16.startsPerSecond)} / ${formatNumber(fsyncs.v201.startsPerSecond)} Starts/s). With synchronous=FULL in WAL mode each commit syncs the WAL, and the main thread waits for it (better-sqlite3 is synchronous). How long an fsync takes drifts with whatever else uses the disk, so compare these with the raw debit's p50 rather than across runs.`,
        `CPU per Start made, each process over its rounds' windows and the settling after them (/proc stat, medians of rounds): ${cpuNote}. The raw debit loop: ${formatNumber(spreadOf(rawCpu.slice(1)).median)} µs of CPU per transaction, ${formatNumber(spreadOf(debits.map((d) => 1e6 / d.perSecond)).median)} µs of wall time (the rest waits for fsync).`,
        `CPU per Start's whole life: the gateway process's CPU per Start made (above) against the bare parts doing the same durable work in their own process (bare-start-life.ts), at the same number of Starts in flight, ${ctx.window(LIFE_S)} s per concurrency and round after the raw debit: per Start the debit transaction (test/bench/lib/bare-money.ts) committed at synchronous=FULL with its fsync before the remote start goes out, as the gateway's Start; one remote-start round trip on a bare ocpp-rpc server with the gateway's options (strictMode, both protocols) to bare ocpp-rpc chargers in their own process answering Accepted (${Math.max(...CONCURRENCY)} of them, half 1.6J RemoteStartTransaction, half 2.0.1 RequestStartTransaction, taken in turn); then the settlement transaction with its shortfall credit and outbox rows at synchronous=FULL, durable before it is done, as the gateway's stop answer waits for it. Both through a group commit like the gateway's (test/bench/lib/bare-group-commit.ts): Starts in flight at once share a commit and its fsync. The settlement's transaction first marks the session charging (the gateway's transaction start, which commits on its own there), so the gateway's settlement statement finds it as it does. Not in the bare parts: HTTP, the token check, the authorized mark, the charger's transaction start, stop and status messages (the gateway handles them; they are its own cost in this goal). ${formatNumber(lives)} bare Starts made.`,
        `Charger process: ${fleet.remoteStarts} remote starts accepted, ${fleet.ended} transactions ended, ${fleet.failures} failed frames; ledger invariants (src/cli/offline/verify-ledger.ts) checked after the run.`,
      ];
      return { figures, notes };
    } finally {
      await stopAll([...started, rawChild]);
    }
  },
};

interface FsyncCost {
  perStart: number;
  /** Wall-clock ms the gateway spent blocked in fsync per Start. */
  msPerStart: number;
  /** Starts/s of the counted run (1 connection, strace attached). */
  startsPerSecond: number;
}

/** fdatasync+fsync calls of the gateway while `run` makes its Starts and they settle, per 2xx. */
async function fsyncsPerStart(
  pid: number,
  run: () => Promise<LoadResult>,
): Promise<FsyncCost | undefined> {
  const out = join('/tmp', `fleetgw-bench-strace-${process.pid}.txt`);
  const strace = spawn(
    'strace',
    // -w: the time column is wall-clock time inside the call, i.e. how long the fsync blocked.
    ['-f', '-c', '-w', '-e', 'trace=fsync,fdatasync', '-o', out, '-p', String(pid)],
    { stdio: 'ignore' },
  );
  const failed = await Promise.race([
    new Promise<boolean>((r) => strace.once('error', () => r(true))),
    new Promise<boolean>((r) => strace.once('exit', () => r(true))),
    sleep(1000).then(() => false),
  ]);
  if (failed) return undefined;
  const r = await run();
  const exited = new Promise<void>((res) => strace.once('exit', () => res()));
  strace.kill('SIGINT');
  await exited;
  const { readFile, rm } = await import('node:fs/promises');
  const text = await readFile(out, 'utf8').catch(() => '');
  await rm(out, { force: true });
  let calls = 0;
  let seconds = 0;
  for (const m of text.matchAll(
    /^\s*[\d.]+\s+([\d.]+)\s+\d+\s+(\d+)\s+(?:\d+\s+)?f(?:data)?sync$/gm,
  )) {
    seconds += Number(m[1]);
    calls += Number(m[2]);
  }
  return r.ok > 0 && calls > 0
    ? {
        perStart: calls / r.ok,
        msPerStart: (seconds * 1000) / r.ok,
        startsPerSecond: r.okPerSecond,
      }
    : undefined;
}

interface CpuPerStart {
  /** µs of CPU per Start made, by process. */
  perStart: Record<string, number>;
  /** CPU seconds of the three together per second of wall time. */
  cores: number;
}

function pidOf(pid: number | undefined): number {
  if (pid === undefined) throw new Error('a bench child has no pid');
  return pid;
}
