import type { Metric, Registry } from 'prom-client';

export type Labels = Record<string, string>;

/** A metric as prom-client's Registry reads it (registry.js: `name`, then `get()`). */
interface RegistryMetric {
  name: string;
  get(): Promise<Rendered>;
}

interface Rendered {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

/**
 * prom-client's Counter and Histogram check and hash a label object on every call (about 1 µs
 * each, on every HTTP answer and every OCPP call); these count in plain numbers per series, found
 * by a key the caller builds, and are rendered by prom-client's registry at scrape time as its own
 * classes render them (test/http-series.test.ts holds prom-client as the oracle). `labels` is
 * read only when a key is first seen.
 */
export class PlainCounter {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    private readonly name: string,
    private readonly help: string,
  ) {}

  inc(key: string, labels: Labels): void {
    const s = this.series.get(key);
    if (s) s.value++;
    else this.series.set(key, { labels, value: 1 });
  }

  register(registry: Registry): void {
    const metric: RegistryMetric = { name: this.name, get: async () => this.render() };
    // prom-client's typings name only its own classes; its registry asks no more than the above.
    registry.registerMetric(metric as unknown as Metric);
  }

  private render(): Rendered {
    return {
      name: this.name,
      help: this.help,
      type: 'counter',
      aggregator: 'sum',
      values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })),
    };
  }
}

interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket, not cumulative: index i counts values in (buckets[i-1], buckets[i]]. */
  perBucket: number[];
  count: number;
  sum: number;
}

/** A histogram in plain numbers per series (see PlainCounter). */
export class PlainHistogram {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(key: string, labels: Labels, value: number): void {
    let s = this.series.get(key);
    if (!s) {
      s = { labels, perBucket: this.buckets.map(() => 0), count: 0, sum: 0 };
      this.series.set(key, s);
    }
    s.count++;
    s.sum += value;
    const i = this.buckets.findIndex((le) => value <= le);
    if (i >= 0) s.perBucket[i] = (s.perBucket[i] ?? 0) + 1;
  }

  register(registry: Registry): void {
    const metric: RegistryMetric = { name: this.name, get: async () => this.render() };
    registry.registerMetric(metric as unknown as Metric);
  }

  private render(): Rendered {
    const { name } = this;
    const values: Rendered['values'] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.perBucket[i] ?? 0;
        values.push({
          metricName: `${name}_bucket`,
          labels: { ...s.labels, le },
          value: cumulative,
        });
      });
      values.push(
        { metricName: `${name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count },
        { metricName: `${name}_sum`, labels: s.labels, value: s.sum },
        { metricName: `${name}_count`, labels: s.labels, value: s.count },
      );
    }
    return { name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}
