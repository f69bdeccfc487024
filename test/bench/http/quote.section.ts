import { bearer } from '../../helpers/http.js';
import { driverEmail } from '../lib/gateway-child.js';
import { compared, type BenchSection } from '../lib/results.js';
import { cpuSeconds } from '../lib/stats.js';
import { forkChild } from './children.js';
import { load, onlyPlanned, startBareApi, startSite, stopAll, type LoadChild } from './site.js';
import type { LoadResult } from './messages.js';

const CONNECTIONS = 50;
const CHARGERS = 4;
const DRIVERS = 50;

/** Issue 7 part 3: POST /v1/sessions/quote against a bare fastify route with the same schema. */
export const quoteSection: BenchSection = {
  key: 'quote',
  title: 'Quote',
  async run(ctx) {
    const started: { stop(): Promise<void> }[] = [];
    try {
      const site = await startSite(
        ctx,
        { chargers: CHARGERS, drivers: DRIVERS, holdMs: 0 },
        started,
      );
      // Every driver quotes every connector, in turn.
      const targets = site.tokens.flatMap((token, d) =>
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
      const gen: LoadChild = forkChild('load.js');
      started.push(gen);
      const run = async (url: string, seconds: number) => {
        const r = await load(gen, {
          url,
          path: '/v1/sessions/quote',
          connections: CONNECTIONS,
          seconds,
          targets,
          offset: 0,
        });
        onlyPlanned(`quote at ${url}`, r);
        return r;
      };
      /** The load, with the CPU the server process spent per answer in the same window, µs. */
      const measured = async (pid: number, go: () => Promise<LoadResult>) => {
        const before = await cpuSeconds(pid);
        const r = await go();
        return { r, cpuMicros: (((await cpuSeconds(pid)) - before) * 1e6) / Math.max(1, r.ok) };
      };
      ctx.log('gateway');
      await run(site.gw.url, ctx.window(2));
      const { r: g, cpuMicros: gwCpu } = await measured(site.gw.pid, () =>
        run(site.gw.url, ctx.window(8)),
      );
      await stopAll(started.splice(0));

      ctx.log('bare fastify route');
      const bare = await startBareApi(started);
      const bareGen: LoadChild = forkChild('load.js');
      started.push(bareGen);
      const runBare = async (seconds: number) => {
        const r = await load(bareGen, {
          url: bare.url,
          path: '/v1/sessions/quote',
          connections: CONNECTIONS,
          seconds,
          targets,
          offset: 0,
        });
        onlyPlanned('bare quote', r);
        return r;
      };
      await runBare(ctx.window(2));
      const { r: b, cpuMicros: bareCpu } = await measured(bare.pid, () => runBare(ctx.window(8)));

      return {
        figures: [
          compared(
            `quotes/s, ${CONNECTIONS} connections`,
            'req/s',
            g.okPerSecond,
            { label: 'bare route req/s', value: b.okPerSecond },
            { ratio: 0.7, direction: 'at least' },
          ),
          // Its own CPU per answer: what the rate would be with a core to itself, and the figure
          // that moves least from run to run on a shared machine.
          compared(`CPU per quote (server process), ${CONNECTIONS} connections`, 'µs', gwCpu, {
            label: 'bare route µs',
            value: bareCpu,
          }),
          compared(`quote p50, ${CONNECTIONS} connections`, 'ms', g.p50, {
            label: 'bare route p50',
            value: b.p50,
          }),
          compared(`quote p99, ${CONNECTIONS} connections`, 'ms', g.p99, {
            label: 'bare route p99',
            value: b.p99,
          }),
        ],
        notes: [
          `Gateway: \`dist/cli.js serve\` child with ${CHARGERS} raw-frame chargers online (1.6J and 2.0.1, in their own child) and ${DRIVERS} drivers with tokens minted over HTTP. Load: autocannon in a third child, ${CONNECTIONS} keep-alive connections, POST /v1/sessions/quote with each driver's token and body in turn across every connector, ${ctx.window(8)} s after a ${ctx.window(2)} s warm-up; ${g.ok} quotes, all 2xx.`,
          `Reference in the same run: bare fastify (own child) with the route's own schema from src/api/schemas.ts and the gateway's strict Ajv options, answering a constant quote; same load and bodies, ${b.ok} requests.`,
          'Per quote the gateway also runs the token check (one SHA-256 of the bearer token, shared with the rate limiter; a verified token is then answered from a bounded in-memory cache, its expiry checked each time), one statement reading the driver with its wallet balance, telematics SoC and the session open on the quoted connector (one implicit read transaction), the quote arithmetic, the HTTP metrics (a counter and a latency histogram) and its security headers, all in synchronous hooks.',
        ],
      };
    } finally {
      await stopAll(started);
    }
  },
};
