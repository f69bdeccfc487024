/**
 * One measured figure. `ratio` is always gateway / reference (the bare library in the same run),
 * whatever the unit: for throughput higher is better, for latency and memory lower is better, and
 * the target says which way it points.
 */
export interface Figure {
  /** What was measured, e.g. "sustained msgs/s, 500 chargers". */
  name: string;
  unit: string;
  gateway: number;
  /** The bare library's figure from the same run, where the issue names one. */
  reference?: { label: string; value: number };
  ratio?: number;
  /** The target as written in docs/benchmarks.md, e.g. "≥ 0.7× bare" or "≤ 40 KB". */
  target?: string;
  met?: boolean;
  note?: string;
}

export interface Section {
  /** Stable key for `--only`, e.g. "ocpp". */
  key: string;
  title: string;
  figures: Figure[];
  /** How it was measured: loads, durations, what ran in which process. */
  notes: string[];
  seconds: number;
}

export interface BenchContext {
  /** Scales every measuring window (BENCH_SCALE, default 1); 0.2 makes a smoke run. */
  scale: number;
  /** Seconds of a measuring window after scaling, never below 1. */
  window(seconds: number): number;
  /** A fresh temporary folder for this section, removed after the run. */
  tempDir(): string;
  log(message: string): void;
}

export interface BenchSection {
  key: string;
  title: string;
  run(ctx: BenchContext): Promise<Omit<Section, 'key' | 'title' | 'seconds'>>;
}

/** A figure compared with its reference; `direction` says which way the target points. */
export function compared(
  name: string,
  unit: string,
  gateway: number,
  reference: { label: string; value: number },
  target?: { ratio: number; direction: 'at least' | 'at most' },
): Figure {
  const ratio = reference.value === 0 ? Number.NaN : gateway / reference.value;
  const figure: Figure = { name, unit, gateway, reference, ratio };
  if (target) {
    figure.target = `${target.direction === 'at least' ? '≥' : '≤'} ${target.ratio}× ${reference.label}`;
    figure.met = target.direction === 'at least' ? ratio >= target.ratio : ratio <= target.ratio;
  }
  return figure;
}
