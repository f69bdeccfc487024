import { spreadOf, type Spread } from './stats.js';

/**
 * One measured figure. `ratio` is always gateway / reference (the bare library in the same run),
 * whatever the unit: for throughput higher is better, for latency and memory lower is better, and
 * the target says which way it points. A figure measured in rounds carries the median of its
 * rounds as its value, their min–max as its spread, and the ratio of the two medians.
 */
export interface Figure {
  /** What was measured, e.g. "sustained msgs/s, 500 chargers". */
  name: string;
  unit: string;
  gateway: number;
  spread?: Spread;
  /** The bare library's figure from the same run, where the issue names one. */
  reference?: { label: string; value: number; spread?: Spread };
  ratio?: number;
  /** The goal as written in docs/benchmarks.md, e.g. "≥ 0.7× bare" or "≤ 40 KB". */
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
  /** Alternating rounds after scaling: never below 3 at BENCH_SCALE 1, one in a smoke run. */
  rounds(full: number): number;
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

/**
 * A figure measured in rounds against its reference measured in the same rounds: the median of
 * each with its spread, and the ratio of the medians.
 */
export function comparedRounds(
  name: string,
  unit: string,
  gateway: readonly number[],
  reference: { label: string; rounds: readonly number[] },
  target?: { ratio: number; direction: 'at least' | 'at most' },
): Figure {
  const g = spreadOf(gateway);
  const r = spreadOf(reference.rounds);
  return {
    ...compared(name, unit, g.median, { label: reference.label, value: r.median }, target),
    spread: g,
    reference: { label: reference.label, value: r.median, spread: r },
  };
}

/** A figure of the gateway alone measured in rounds: the median with its spread. */
export function measuredRounds(name: string, unit: string, rounds: readonly number[]): Figure {
  const g = spreadOf(rounds);
  return { name, unit, gateway: g.median, spread: g };
}

/** An absolute goal (issue 30's "≤ 100 ms"), judged on the figure's value: its median if in rounds. */
export function withGoal(figure: Figure, direction: 'at least' | 'at most', value: number): Figure {
  const met = direction === 'at least' ? figure.gateway >= value : figure.gateway <= value;
  return {
    ...figure,
    target: `${direction === 'at least' ? '≥' : '≤'} ${value.toLocaleString('en-US')} ${figure.unit}`,
    met,
  };
}
