import { describe, expect, it } from 'vitest';
import { SiteTrace } from './helpers/site-trace.js';
import type { TappedFrame } from './helpers/wire-tap.js';

/**
 * The tolerance rule of the site test (docs/load-management.md, "Measured"), on frames written by
 * hand: what it lets through and what it catches. The site test relies on it catching a charger
 * that ignores a lower and a site over its limit.
 */

const CONNECTORS = [1, 2].map((n) => ({
  chargerId: 'CP',
  connectorId: String(n),
  maxW: 50_000,
  volts: 230,
  phases: 3 as const,
}));

class Wire {
  private id = 0;
  private t = 0;
  constructor(readonly trace: SiteTrace) {}
  private send(direction: TappedFrame['direction'], message: unknown[]): void {
    this.t++;
    this.trace.record({ atMs: this.t, atEpochMs: this.t, chargerId: 'CP', direction, message });
  }
  start(connectorId: number, ref: number): void {
    const id = `s${++this.id}`;
    this.send('up', [2, id, 'StartTransaction', { connectorId, meterStart: 0 }]);
    this.send('down', [3, id, { transactionId: ref, idTagInfo: { status: 'Accepted' } }]);
  }
  meter(connectorId: number, watts: number): void {
    this.send('up', [
      2,
      `m${++this.id}`,
      'MeterValues',
      {
        connectorId,
        meterValue: [
          {
            timestamp: new Date(this.t + 1).toISOString(),
            sampledValue: [{ value: String(watts), measurand: 'Power.Active.Import', unit: 'W' }],
          },
        ],
      },
    ]);
  }
  /** A TxProfile in W (a charger-wide TxDefaultProfile without `ref`), answered `status`. */
  profile(connectorId: number, ref: number | undefined, watts: number, status = 'Accepted'): void {
    const id = `p${++this.id}`;
    this.send('down', [
      2,
      id,
      'SetChargingProfile',
      {
        connectorId,
        csChargingProfiles: {
          chargingProfileId: 100 + connectorId,
          stackLevel: ref === undefined ? 0 : 1,
          chargingProfilePurpose: ref === undefined ? 'TxDefaultProfile' : 'TxProfile',
          chargingProfileKind: ref === undefined ? 'Absolute' : 'Relative',
          transactionId: ref,
          chargingSchedule: {
            chargingRateUnit: 'W',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: watts }],
          },
        },
      },
    ]);
    this.send('up', [3, id, { status }]);
  }
}

function site(limitW: number) {
  const trace = new SiteTrace(CONNECTORS, limitW);
  const wire = new Wire(trace);
  wire.profile(0, undefined, 20_000);
  wire.start(1, 11);
  wire.start(2, 12);
  wire.profile(1, 11, 30_000);
  wire.profile(2, 12, 30_000);
  wire.meter(1, 30_000);
  wire.meter(2, 30_000);
  return { trace, wire };
}

describe('site power tolerance', () => {
  it('a lower obeyed within one meter sample of each charger passes', () => {
    const { trace, wire } = site(60_000);
    trace.setLimit(40_000);
    wire.meter(1, 30_000); // before its new profile: the old limit still holds
    wire.profile(1, 11, 20_000);
    wire.profile(2, 12, 20_000);
    wire.meter(1, 20_000);
    wire.meter(2, 20_000);
    expect(trace.violations).toEqual([]);
    expect(trace.settled()).toBe(true);
    expect(Math.max(...trace.points.map((p) => p.measuredW - p.limitW))).toBe(20_000);
  });

  it('a charger that keeps its power after accepting a lower is caught', () => {
    const { trace, wire } = site(60_000);
    trace.setLimit(40_000);
    wire.profile(1, 11, 20_000);
    wire.profile(2, 12, 20_000);
    wire.meter(1, 30_000);
    expect(trace.violations.map((v) => v.what)).toEqual([
      'CP/1 reported 30000 W over its accepted allowance 20000 W',
      'site measured 50000 W over 40000 W',
    ]);
  });

  it('allowances that do not fit a lowered limit keep the old bound, and are caught past it', () => {
    const { trace, wire } = site(60_000);
    trace.setLimit(40_000);
    wire.profile(1, 11, 15_000);
    expect(trace.violations).toEqual([]);
    expect(trace.settled()).toBe(false);
    wire.profile(2, 12, 35_000); // a raise while the lower lands: within the old limit
    expect(trace.violations).toEqual([]);
    wire.profile(1, 11, 30_000); // past the old limit
    expect(trace.violations.map((v) => v.what)).toEqual(['site allowed 65000 W over 60000 W']);
  });

  it('a raise gives no window: a session over the unchanged limit is caught at once', () => {
    const { trace, wire } = site(60_000);
    wire.profile(1, 11, 40_000);
    expect(trace.violations.map((v) => v.what)).toEqual(['site allowed 70000 W over 60000 W']);
  });

  it('a session starting without a default profile counts at its maximum', () => {
    const trace = new SiteTrace(CONNECTORS, 60_000);
    const wire = new Wire(trace);
    wire.start(1, 11);
    wire.start(2, 12);
    expect(trace.violations.map((v) => v.what)).toEqual(['site allowed 100000 W over 60000 W']);
  });

  it('a charger refusing profiles counts at its maximum', () => {
    const { trace, wire } = site(100_000);
    wire.profile(1, 11, 10_000, 'Rejected');
    expect(trace.allowance('CP', '1')).toBe(30_000);
    expect(trace.refusals.get('CP')).toBe(1);
  });
});
