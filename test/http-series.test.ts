import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpSeries } from '../src/metrics/http-series.js';
import { PlainCounter, PlainHistogram } from '../src/metrics/plain-series.js';
import { LATENCY_BUCKETS } from '../src/metrics/metrics.js';

/**
 * The HTTP series (src/metrics/http-series.ts) render exactly what prom-client's own Counter and
 * Histogram render for the same answers: prom-client is the oracle.
 */
const answer = fc.record({
  method: fc.constantFrom('GET', 'POST', 'HEAD'),
  route: fc.constantFrom(
    '/v1/sessions',
    '/v1/sessions/quote',
    'unmatched',
    '/admin/v1/chargers/:id',
  ),
  status: fc.constantFrom(200, 201, 400, 401, 404, 409, 503),
  // Around and on the bucket bounds, and past the last one.
  seconds: fc.oneof(
    fc.constantFrom(...LATENCY_BUCKETS, 0, 31),
    fc.double({ min: 0, max: 40, noNaN: true }),
  ),
});

/** Each sample line, sorted, with its labels in a fixed order. */
async function samples(registry: Registry, rename: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values) {
      const name = (v as { metricName?: string }).metricName ?? metric.name;
      const labels = Object.entries(v.labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => `${k}=${String(x)}`)
        .join(',');
      const base = rename[metric.name];
      const renamed = base === undefined ? name : base + name.slice(metric.name.length);
      lines.push(`${renamed}{${labels}} ${v.value}`);
    }
  }
  return lines.sort();
}

describe('HTTP series', () => {
  it('render what prom-client renders for the same answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { maxLength: 60 }), async (answers) => {
        const ours = new Registry();
        const series = new HttpSeries(LATENCY_BUCKETS);
        series.register(ours);
        const theirs = new Registry();
        const labelNames = ['method', 'route', 'status'];
        const counter = new Counter({ name: 'c', help: 'c', labelNames, registers: [theirs] });
        const histogram = new Histogram({
          name: 'h',
          help: 'h',
          labelNames,
          buckets: LATENCY_BUCKETS,
          registers: [theirs],
        });
        for (const a of answers) {
          series.observe(a.method, a.route, a.status, a.seconds);
          const labels = { method: a.method, route: a.route, status: String(a.status) };
          counter.inc(labels);
          histogram.observe(labels, a.seconds);
        }
        const expected = await samples(theirs, {
          c: 'fleetgw_http_requests_total',
          h: 'fleetgw_http_request_duration_seconds',
        });
        expect(await samples(ours, {})).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('render what prom-client renders with a counter label the histogram lacks (OCPP calls)', async () => {
    const call = fc.record({
      protocol: fc.constantFrom('ocpp1.6', 'ocpp2.0.1'),
      action: fc.constantFrom('Heartbeat', 'MeterValues', 'TransactionEvent'),
      direction: fc.constantFrom('in', 'out'),
      outcome: fc.constantFrom('ok', 'error', 'timeout'),
      seconds: answer.map((a) => a.seconds),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 60 }), async (calls) => {
        const ours = new Registry();
        const counter = new PlainCounter('c', 'c');
        const histogram = new PlainHistogram('h', 'h', LATENCY_BUCKETS);
        counter.register(ours);
        histogram.register(ours);
        const theirs = new Registry();
        const theirCounter = new Counter({
          name: 'c',
          help: 'c',
          labelNames: ['protocol', 'action', 'direction', 'outcome'],
          registers: [theirs],
        });
        const theirHistogram = new Histogram({
          name: 'h',
          help: 'h',
          labelNames: ['protocol', 'action', 'direction'],
          buckets: LATENCY_BUCKETS,
          registers: [theirs],
        });
        for (const { protocol, action, direction, outcome, seconds } of calls) {
          const key = `${protocol} ${action} ${direction}`;
          counter.inc(`${key} ${outcome}`, { protocol, action, direction, outcome });
          histogram.observe(key, { protocol, action, direction }, seconds);
          theirCounter.inc({ protocol, action, direction, outcome });
          theirHistogram.observe({ protocol, action, direction }, seconds);
        }
        expect(await samples(ours, {})).toEqual(await samples(theirs, {}));
      }),
      { numRuns: 100 },
    );
  });
});
