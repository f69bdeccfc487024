import type { Protocol, Scenario } from './features.js';

/**
 * The physical truth of a run and the meter that reports it. The EV draws a power set once per
 * sample interval (0 while it pauses); `Ev` integrates it on our clock, so the energy delivered up
 * to any instant is known exactly, and the stop takes effect at the instant it does (the charger
 * is told at a real moment, between two samples). The meter shows that energy through its quirks.
 */
export class Ev {
  /** Power from each moment on (W), in time order. */
  private readonly steps: { fromMs: number; powerW: number }[] = [];
  /** When the flow stops (the charger obeyed a stop, or the EV ended it). */
  private endMs = Number.POSITIVE_INFINITY;

  constructor(
    readonly startMs: number,
    /** The EV stops drawing once this much is delivered (Wh). */
    private readonly fullWh: number,
  ) {}

  draw(fromMs: number, powerW: number): void {
    this.steps.push({ fromMs, powerW });
  }

  /** The flow ends at `atMs` (kept if it already ended earlier). */
  stop(atMs: number): void {
    this.endMs = Math.min(this.endMs, atMs);
  }

  get stopped(): boolean {
    return Number.isFinite(this.endMs);
  }

  /** Wh delivered from the start up to `atMs`. */
  energyAt(atMs: number): number {
    const until = Math.min(atMs, this.endMs);
    let wh = 0;
    this.steps.forEach((s, i) => {
      const to = Math.min(until, this.steps[i + 1]?.fromMs ?? Number.POSITIVE_INFINITY);
      if (to > s.fromMs) wh += (s.powerW * (to - s.fromMs)) / 3_600_000;
    });
    return Math.min(wh, this.fullWh);
  }

  full(atMs: number): boolean {
    return this.energyAt(atMs) >= this.fullWh;
  }
}

/** A register's shares of the energy: one for a total, three for per-phase registers. */
const PHASE_SHARES = [0.31, 0.33, 0.36];

interface Register {
  phase?: 'L1' | 'L2' | 'L3';
  location?: 'Outlet' | 'Inlet';
  /** Wh. */
  value: number;
}

/**
 * What the meter shows for `wh` delivered since the start of its current count (`baseWh`: the
 * register then, 0 after a reset). Every register starts on a whole step of its resolution, so
 * no register shows more than was delivered (a meter's hidden fraction at the start is taken as 0).
 */
export function registers(s: Scenario, baseWh: number, wh: number): Register[] {
  const step = (x: number) => Math.floor(x / s.resolutionWh) * s.resolutionWh;
  const aligned = (x: number) => step(x);
  const outlet = aligned(baseWh) + step(wh);
  const phases = PHASE_SHARES.map((share, i) => ({
    phase: (['L1', 'L2', 'L3'] as const)[i],
    value: aligned(baseWh * share) + step(wh * share),
  }));
  const inlet = {
    location: 'Inlet' as const,
    value: aligned(baseWh * s.inletFactor) + step(wh * s.inletFactor),
  };
  switch (s.layout) {
    case 'total':
      return [{ value: outlet }];
    case 'outlet':
      return [{ location: 'Outlet', value: outlet }];
    case 'phases':
      return phases;
    case 'phases+total':
      return [...phases, { value: outlet }];
    case 'outlet+inlet':
      return [{ location: 'Outlet', value: outlet }, inlet];
    case 'inlet+outlet':
      return [inlet, { location: 'Outlet', value: outlet }];
  }
}

/** The register a transaction's start or stop names as an integer (1.6 meterStart / meterStop). */
export function mainRegister(s: Scenario, baseWh: number, wh: number): number {
  const all = registers(s, baseWh, wh);
  const totals = all.filter((r) => r.phase === undefined && r.location !== 'Inlet');
  if (totals.length > 0) return (totals[0] as Register).value;
  return all.reduce((sum, r) => sum + r.value, 0);
}

/** Registers a sample of this layout carries, for the rounding each adds (Wh). */
export function quantizationWh(s: Scenario): number {
  const counted = s.layout === 'phases' ? 3 : 1;
  return counted * s.resolutionWh;
}

/** The sampled values of one meter reading, as the protocol writes them. */
export function sampledValues(
  s: Scenario,
  protocol: Protocol,
  baseWh: number,
  wh: number,
  context: string,
): Record<string, unknown>[] {
  const all = registers(s, baseWh, wh);
  // A lone register without a unit may leave out its measurand too (the spec's default).
  const bare = all.length === 1 && s.unit === 'no unit';
  return all.map((r) => {
    const where = {
      ...(!bare && { measurand: 'Energy.Active.Import.Register' }),
      context,
      ...(r.phase && { phase: r.phase }),
      ...(r.location && { location: r.location }),
    };
    return protocol === 'ocpp1.6'
      ? { ...where, ...value16(s, r.value) }
      : { ...where, ...value201(s, r.value) };
  });
}

function value16(s: Scenario, wh: number): Record<string, unknown> {
  switch (s.unit) {
    case 'kWh':
    case 'multiplier':
      return { value: String(wh / 1000), unit: 'kWh' };
    case 'decimal comma':
      return { value: ` ${(wh / 1000).toFixed(3).replace('.', ',')} `, unit: 'kWh' };
    case 'no unit':
      return { value: String(wh) };
    case 'Wh':
      return { value: String(wh), unit: 'Wh' };
  }
}

function value201(s: Scenario, wh: number): Record<string, unknown> {
  switch (s.unit) {
    case 'kWh':
    case 'decimal comma':
      return { value: wh / 1000, unitOfMeasure: { unit: 'kWh' } };
    case 'multiplier':
      return { value: wh / 1000, unitOfMeasure: { unit: 'Wh', multiplier: 3 } };
    case 'no unit':
      return { value: wh };
    case 'Wh':
      return { value: wh, unitOfMeasure: { unit: 'Wh' } };
  }
}
