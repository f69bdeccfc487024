import { bearer } from '../../helpers/http.js';
import { driverEmail } from '../lib/gateway-child.js';
import { comparedRounds, type BenchSection } from '../lib/results.js';
import { cpuSeconds } from '../lib/stats.js';
import { forkChild } from './children.js';
import { load, onlyPlanned, startBareApi, startSite, stopAll, type LoadChild } from './site.js';
import type { LoadResult, LoadTarget, ShellApiReady } from './messages.js';

const CONNECTIONS = 50;
const CHARGERS = 4;
const DRIVERS = 50;
/** Rounds at BENCH_SCALE 1 (ctx.rounds scales them; a smoke run measures one). */
const FULL_ROUNDS = 3;
const ROUND_S = 3;

interface Server {
  name: string;
  url: string;
  pid: number;
  targets: LoadTarget[];
}

interface Measured {
  r: LoadResult;
  cpuMicros: number;
}

/**
 * Issue 7 part 3: POST /v1/sessions/quote against a bare fastify route with the same schema, and
 * (issue 18) against the gateway's HTTP shell answering the same constant: the goal is against the
 * bare route; the shell splits the difference into what every authenticated answer costs and what
 * the quote itself costs.
 */
export const quoteSection: BenchSection = {
  key: 'quote',
  title: 'Quote',
  async run(ctx) {
    const ROUNDS = ctx.rounds(FULL_ROUNDS);
    const started: { stop(): Promise<void> }[] = [];
    try {
      const site = await startSite(
        ctx,
        { chargers: CHARGERS, drivers: DRIVERS, holdMs: 0 },
        started,
      );
      // Every driver quotes every connector, in turn.
      const targetsFor = (tokens: string[]) =>
        tokens.flatMap((token, d) =>
          site.chargerIds.flatMap((chargerId) =>
            Array.from({ length: site.connectors }, (_, c) => ({
              body: JSON.stringify({
                chargerId,
                connectorId: String(c + 1),
                driverEmail: driverEmail(d),
              }),
              headers: bearer(token),
            })),
          ),
        );
      // Every server up at once, measured in turns: on a shared machine the rate drifts by a
      // third within a minute, and adjacent windows see the same machine.
      const bare = await startBareApi(started);
      const shellChild = forkChild<ShellApiReady | { error: string }>('shell-api.js');
      started.push(shellChild);
      shellChild.send({ dir: ctx.tempDir(), drivers: DRIVERS });
      const shellReady = await shellChild.next(60_000);
      if ('error' in shellReady) throw new Error(`HTTP shell: ${shellReady.error}`);
      const gateway: Server = {
        name: 'gateway',
        url: site.gw.url,
        pid: site.gw.pid,
        targets: targetsFor(site.tokens),
      };
      const shell: Server = {
        name: 'HTTP shell',
        url: shellReady.url,
        pid: pidOf(shellChild.proc.pid),
        targets: targetsFor(shellReady.tokens),
      };
      // The bare route reads no token: the gateway's bodies and headers, as sent to the gateway.
      const bareRoute: Server = { name: 'bare route', ...bare, targets: gateway.targets };
      const servers = [gateway, shell, bareRoute];

      const gen: LoadChild = forkChild('load.js');
      started.push(gen);
      const run = async (server: Server, seconds: number) => {
        const r = await load(gen, {
          url: server.url,
          path: '/v1/sessions/quote',
          connections: CONNECTIONS,
          seconds,
          targets: server.targets,
          offset: 0,
        });
        onlyPlanned(`quote at the ${server.name}`, r);
        return r;
      };
      /** The load, with the CPU the server process spent per answer in the same window, µs. */
      const measured = async (server: Server): Promise<Measured> => {
        const before = await cpuSeconds(server.pid);
        const r = await run(server, ctx.window(ROUND_S));
        const cpuMicros = (((await cpuSeconds(server.pid)) - before) * 1e6) / Math.max(1, r.ok);
        return { r, cpuMicros };
      };
      ctx.log('warm-up: gateway, HTTP shell, bare fastify route');
      for (const server of servers) await run(server, ctx.window(2));
      const rounds: Measured[][] = [];
      for (let i = 0; i < ROUNDS; i++) {
        ctx.log(`round ${i + 1} of ${ROUNDS}: gateway, HTTP shell, bare fastify route`);
        const round: Measured[] = [];
        for (const server of servers) round.push(await measured(server));
        rounds.push(round);
      }
      const at = (i: number) => rounds.map((round) => round[i] as Measured);
      const each = (i: number, pick: (m: Measured) => number) => at(i).map(pick);
      const rate = (i: number) => each(i, (m) => m.r.okPerSecond);
      const cpu = (i: number) => each(i, (m) => m.cpuMicros);
      const ok = (i: number) => at(i).reduce((n, m) => n + m.r.ok, 0);
      const perRound = (a: number, b: number, pick: (m: Measured) => number) =>
        rounds.map((round) => (pick(round[a] as Measured) / pick(round[b] as Measured)).toFixed(2));
      const [G, S, B] = [0, 1, 2];

      return {
        figures: [
          comparedRounds(
            `quotes/s, ${CONNECTIONS} connections`,
            'req/s',
            rate(G),
            { label: 'bare route req/s', rounds: rate(B) },
            { ratio: 0.7, direction: 'at least' },
          ),
          // Its own CPU per answer: what the rate would be with a core to itself, and the figure
          // that moves least from run to run on a shared machine.
          comparedRounds(
            `CPU per quote (server process), ${CONNECTIONS} connections`,
            'µs',
            cpu(G),
            {
              label: 'bare route µs',
              rounds: cpu(B),
            },
          ),
          comparedRounds(`HTTP shell, constant answer: req/s`, 'req/s', rate(S), {
            label: 'bare route req/s',
            rounds: rate(B),
          }),
          comparedRounds(`HTTP shell, constant answer: CPU per answer`, 'µs', cpu(S), {
            label: 'bare route µs',
            rounds: cpu(B),
          }),
          comparedRounds(`quotes/s against the HTTP shell`, 'req/s', rate(G), {
            label: 'HTTP shell req/s',
            rounds: rate(S),
          }),
          comparedRounds(
            `quote p50, ${CONNECTIONS} connections`,
            'ms',
            each(G, (m) => m.r.p50),
            { label: 'bare route p50', rounds: each(B, (m) => m.r.p50) },
          ),
          comparedRounds(
            `quote p99, ${CONNECTIONS} connections`,
            'ms',
            each(G, (m) => m.r.p99),
            { label: 'bare route p99', rounds: each(B, (m) => m.r.p99) },
          ),
        ],
        notes: [
          `Gateway: \`dist/cli.js serve\` child with ${CHARGERS} raw-frame chargers online (1.6J and 2.0.1, in their own child) and ${DRIVERS} drivers with tokens minted over HTTP. Load: autocannon in its own child, ${CONNECTIONS} keep-alive connections, POST /v1/sessions/quote with each driver's token and body in turn across every connector; ${ok(G)} quotes, all 2xx.`,
          `Bare route (reference for the goal): bare fastify in its own child with the route's own schema from src/api/schemas.ts and the gateway's strict Ajv options, answering a constant quote; the same bodies and headers, ${ok(B)} requests.`,
          `HTTP shell (test/bench/http/shell-api.ts): the gateway's own server factory (logger, security headers, Host check, error handler, connection tracking), its driver-token check on a real token store in SQLite (SHA-256 of the bearer token, the verified-token cache, the rate limiter), its HTTP metrics hook and Node's default metrics, around the same constant answer, with ${DRIVERS} tokens of its own; ${ok(S)} requests. What the gateway spends beyond the shell is the quote itself; what the shell spends beyond the bare route, every authenticated answer of the API spends.`,
          `Measured in ${ROUNDS} rounds, each ${ctx.window(ROUND_S)} s on the gateway, then the shell, then the bare route, after ${ctx.window(2)} s of warm-up on each, all three up throughout; every figure is the median of its rounds. Gateway/bare per round: rate ${perRound(G, B, (m) => m.r.okPerSecond).join(', ')}, CPU ${perRound(G, B, (m) => m.cpuMicros).join(', ')}; shell/bare: rate ${perRound(S, B, (m) => m.r.okPerSecond).join(', ')}, CPU ${perRound(S, B, (m) => m.cpuMicros).join(', ')}.`,
          "Per quote the gateway, beyond the shell, reads the driver with its wallet balance, telematics SoC and the session open on the quoted connector (one SQLite statement the first time; then from memory until a write touches them, src/charging/quote-reads.ts, with `PRAGMA data_version` asked at most every 100 ms for other processes' writes), checks the connector and the driver's scope, and does the quote's arithmetic and the charging-time estimate.",
        ],
      };
    } finally {
      await stopAll(started);
    }
  },
};

function pidOf(pid: number | undefined): number {
  if (pid === undefined) throw new Error('HTTP shell child has no pid');
  return pid;
}
