import { METER_MAX_WH, type Scenario } from './classes.js';

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

  /** The power drawn at `atMs` (W). */
  powerAt(atMs: number): number {
    if (atMs >= this.endMs || this.full(atMs)) return 0;
    return [...this.steps].reverse().find((s) => s.fromMs <= atMs)?.powerW ?? 0;
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

/** What the meter counts from: the register at the start of its current count, and the energy then. */
export interface Count {
  baseWh: number;
  sinceWh: number;
}

const stepOf = (s: Scenario) => ({ '1 Wh': 1, '10 Wh': 10, '100 Wh': 100 })[s.resolution];

/**
 * What the meter shows for `wh` delivered (counting from `count`). Every register starts on a
 * whole step of its resolution, so no register shows more than was delivered (a meter's hidden
 * fraction at the start is taken as 0); past the meter's maximum a register starts again at 0.
 */
export function registers(s: Scenario, count: Count, deliveredWh: number): Register[] {
  const res = stepOf(s);
  const step = (x: number) => Math.floor(x / res) * res;
  const wh = deliveredWh - count.sinceWh;
  const shown = (base: number, share: number) =>
    (step(base * share) + step(wh * share)) % METER_MAX_WH;
  const outlet = shown(count.baseWh, 1);
  const phases = PHASE_SHARES.map((share, i) => ({
    phase: (['L1', 'L2', 'L3'] as const)[i],
    value: shown(count.baseWh, share),
  }));
  const inlet = { location: 'Inlet' as const, value: shown(count.baseWh, s.inletFactor) };
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
export function mainRegister(s: Scenario, count: Count, wh: number): number {
  const all = registers(s, count, wh);
  const totals = all.filter((r) => r.phase === undefined && r.location !== 'Inlet');
  if (totals.length > 0) return (totals[0] as Register).value;
  return all.reduce((sum, r) => sum + r.value, 0);
}

/** Registers a sample of this layout carries, for the rounding each adds (Wh). */
export function quantizationWh(s: Scenario): number {
  const counted = s.layout === 'phases' ? 3 : 1;
  return counted * stepOf(s) * (s.energy === 'interval' ? 2 : 1);
}

/** One reading the charger reports: what it measured at one instant. */
export interface Reading {
  count: Count;
  /** Energy delivered at the reading (Wh). */
  wh: number;
  /** Interval energy: the register's rise since the reading it is counted from (Wh). */
  intervalWh: number;
  powerW: number;
  /** The EV's state of charge (%). */
  soc: number;
  /** The reading carries the energy measurands (not only the extras). */
  energy: boolean;
  context: string | undefined;
}

const REGISTER = 'Energy.Active.Import.Register';
const INTERVAL = 'Energy.Active.Import.Interval';

/** The sampled values of one reading, as the run's protocol and firmware write them. */
export function sampledValues(s: Scenario, r: Reading): Record<string, unknown>[] {
  const v16 = s.protocol === 'ocpp1.6';
  const regs = registers(s, r.count, r.wh);
  // A lone register without a unit may leave out its measurand too (the spec's default).
  const bare =
    regs.length === 1 && s.unit === 'no unit' && s.energy === 'register' && s.extras === 'none';
  const context = r.context === undefined ? {} : { context: r.context };
  const energy: Record<string, unknown>[] = [];
  if (r.energy && s.energy !== 'interval')
    for (const reg of regs)
      energy.push({
        ...(!bare && { measurand: REGISTER }),
        ...context,
        ...(reg.phase && { phase: reg.phase }),
        ...(reg.location && { location: reg.location }),
        ...(v16 ? energy16(s, reg.value) : energy201(s, reg.value)),
      });
  if (r.energy && s.energy !== 'register')
    energy.push({
      measurand: INTERVAL,
      ...context,
      ...(v16 ? energy16(s, r.intervalWh) : energy201(s, r.intervalWh)),
    });
  const power = {
    measurand: 'Power.Active.Import',
    ...context,
    ...quantity(v16, s['power-unit'] === 'kW' ? r.powerW / 1000 : r.powerW, s['power-unit']),
  };
  const current = {
    measurand: 'Current.Import',
    ...context,
    ...quantity(v16, Math.round((r.powerW / 400 / Math.sqrt(3)) * 10) / 10, 'A'),
  };
  const soc = { measurand: 'SoC', ...context, location: 'EV', ...quantity(v16, r.soc, 'Percent') };
  switch (s.extras) {
    case 'none':
      return energy;
    case 'power':
      return [...energy, power];
    case 'power-first':
      return [power, ...energy];
    case 'power+current':
      return [...energy, power, current];
    case 'power+soc':
      return [...energy, power, soc];
    case 'current+soc':
      return [...energy, current, soc];
  }
}

function quantity(v16: boolean, value: number, unit: string): Record<string, unknown> {
  return v16 ? { value: String(value), unit } : { value, unitOfMeasure: { unit } };
}

function energy16(s: Scenario, wh: number): Record<string, unknown> {
  switch (s.unit) {
    case 'kWh':
    case 'multiplier':
      return { value: String(wh / 1000), unit: 'kWh' };
    case 'lower-case':
      return { value: String(wh / 1000), unit: 'kwh' };
    case 'decimal comma':
      return { value: ` ${(wh / 1000).toFixed(3).replace('.', ',')} `, unit: 'kWh' };
    case 'no unit':
      return { value: String(wh) };
    case 'Wh':
      return { value: String(wh), unit: 'Wh' };
  }
}

function energy201(s: Scenario, wh: number): Record<string, unknown> {
  switch (s.unit) {
    case 'kWh':
    case 'decimal comma':
      return { value: wh / 1000, unitOfMeasure: { unit: 'kWh' } };
    case 'lower-case':
      return { value: wh / 1000, unitOfMeasure: { unit: 'kwh' } };
    case 'multiplier':
      return { value: wh / 1000, unitOfMeasure: { unit: 'Wh', multiplier: 3 } };
    case 'no unit':
      return { value: wh };
    case 'Wh':
      return { value: wh, unitOfMeasure: { unit: 'Wh' } };
  }
}
