import { PLAIN, type ClassValue, type Firmware, type Scenario } from './classes.js';
import type { Invariant } from './invariants.js';

/** A plain run's figures: 150 ms samples, nothing drawn beyond what the case says. */
const FIGURES: Omit<Scenario, keyof Firmware> = {
  protocol: 'ocpp1.6',
  amount: 1_000,
  samplesToPaid: 10,
  intervalMs: 150,
  jitter: 0,
  startRegisterWh: 1_234_772,
  powerOnlySamples: 3,
  inletFactor: 1.05,
  pauses: [],
  skewMs: 0,
  clockStep: null,
  lifeAt: 4,
  eventAt: 2,
  outage: null,
  dropsAt: [],
  kill: null,
  lateStopMs: 0,
  evFullShare: 1,
  powerBoundFactor: 1.3,
  taperFrom: 1,
};

/** A field report as a fixed combination of class values, and the invariants it broke on main. */
export interface FixedCase {
  name: string;
  scenario: Scenario;
  /** What it broke before its fix (checked while `fixedBy` has a value in AWAITING_FIX). */
  broke: Invariant[];
  /** The class values its fix is about (a case may use others beside them). */
  fixedBy: ClassValue[];
}

const fixed = (
  name: string,
  broke: Invariant[],
  classes: Partial<Firmware>,
  figures: Partial<Scenario> = {},
): FixedCase => {
  const scenario = { ...FIGURES, ...PLAIN, ...classes, ...figures };
  // A's Started without a reading is there to take the register away: power is its class.
  const fixedBy = (Object.keys(classes) as (keyof Firmware)[])
    .filter((d) => !(name.startsWith('A:') && d === 'transaction-values'))
    .map((d) => `${d}=${scenario[d]}` as ClassValue);
  return { name, broke, fixedBy, scenario };
};

/**
 * The field reports of the meter-truth issue, each the class values it comes from. The generator
 * draws every one of them; these run every time so each class keeps its named example. Figures
 * are scaled to 150 ms samples (a run is real time): the classes, not the kilowatts, are the case.
 */
export const FIXED_CASES: FixedCase[] = [
  fixed(
    'A: energy before the first register (2.0.1 Started without a reading, power-only samples)',
    ['delivered ≤ paid + one sample'],
    {
      extras: 'power',
      'power-unit': 'kW',
      'energy-from': 'after-power-only',
      'transaction-values': 'end-only',
    },
    { protocol: 'ocpp2.0.1', amount: 355, samplesToPaid: 8 },
  ),
  fixed(
    'B: a 1.6 register drops to zero without a reboot and counts up again',
    ['billed ≥ what the readings prove'],
    { 'register-life': 'reset-without-reboot' },
    { amount: 354, samplesToPaid: 8 },
  ),
  fixed(
    'C: 1.6 interval energy in periodic and overlapping clock-aligned samples',
    ['not stopped before paid − one sample'],
    { energy: 'interval', 'clock-aligned': 'also' },
    { amount: 825 },
  ),
  fixed(
    'D: a 1.6 charger sends its idTag back in lower case',
    ['not stopped before paid − one sample'],
    { 'id-shape': 'lower-case' },
  ),
  fixed(
    'D: a 2.0.1 station sends its idToken back in lower case',
    ['not stopped before paid − one sample'],
    { 'id-shape': 'lower-case' },
    { protocol: 'ocpp2.0.1' },
  ),
  fixed(
    'E: 1.6 SecurityEventNotification (the security whitepaper) during a session',
    ['every frame answered'],
    { notifications: 'security-event' },
  ),
  fixed(
    'F: 1.6 meterStart as decimal kWh',
    ['billed ≥ what the readings prove'],
    { 'meter-start': 'decimal kWh', ev: 'stops-itself' },
    { amount: 964, samplesToPaid: 12, evFullShare: 0.9 },
  ),
];
