import type { Registry } from 'prom-client';
import { PlainCounter, PlainHistogram } from './plain-series.js';

/**
 * fleetgw_http_requests_total and fleetgw_http_request_duration_seconds as plain numbers per
 * (method, route, status), rendered by prom-client's registry at scrape time (plain-series.ts):
 * prom-client's own Counter and Histogram cost about 0.6 µs an answer, a hundredth of a quote
 * (npm run bench); these are two Map lookups.
 */
export class HttpSeries {
  private readonly requests = new PlainCounter(
    'fleetgw_http_requests_total',
    'HTTP requests answered, by route pattern and status',
  );
  private readonly duration: PlainHistogram;

  constructor(buckets: readonly number[]) {
    this.duration = new PlainHistogram(
      'fleetgw_http_request_duration_seconds',
      'HTTP request latency, by route pattern and status',
      buckets,
    );
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    const labels = { method, route, status: String(status) };
    this.requests.inc(key, labels);
    this.duration.observe(key, labels, seconds);
  }

  /** Registers both metrics on `registry`. */
  register(registry: Registry): void {
    this.requests.register(registry);
    this.duration.register(registry);
  }
}
