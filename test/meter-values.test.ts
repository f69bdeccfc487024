import { describe, expect, it } from 'vitest';
import { latestReading, readMeterValue } from '../src/ocpp/v16/meter-values.js';

const at = '2026-11-22T10:00:00.000Z';

describe('OCPP 1.6 meter values as real chargers send them', () => {
  it('reads the register with no measurand and no unit as Wh', () => {
    expect(readMeterValue({ timestamp: at, sampledValue: [{ value: '1234' }] }).energyWh).toBe(
      1234,
    );
  });

  it('converts kWh and kW, and tolerates spaces and decimal commas', () => {
    const r = readMeterValue({
      timestamp: at,
      sampledValue: [
        { value: ' 12,5 ', measurand: 'Energy.Active.Import.Register', unit: 'kWh' },
        { value: '7.4', measurand: 'Power.Active.Import', unit: 'kW' },
      ],
    });
    expect(r.energyWh).toBe(12_500);
    expect(r.powerW).toBeCloseTo(7400);
  });

  it('sums per-phase values when no total is given, and prefers the total when it is', () => {
    const phases = readMeterValue({
      timestamp: at,
      sampledValue: ['L1', 'L2', 'L3'].map((phase) => ({
        value: '1000',
        measurand: 'Energy.Active.Import.Register',
        phase,
      })),
    });
    expect(phases.energyWh).toBe(3000);
    const withTotal = readMeterValue({
      timestamp: at,
      sampledValue: [{ value: '1000', phase: 'L1' }, { value: '2500' }],
    });
    expect(withTotal.energyWh).toBe(2500);
  });

  it('ignores unusable values: unknown units, signed data, garbage, SoC outside 0-100', () => {
    const r = readMeterValue({
      timestamp: at,
      sampledValue: [
        { value: '5', unit: 'varh' },
        { value: 'AAAA', format: 'SignedData' },
        { value: 'n/a', measurand: 'Power.Active.Import' },
        { value: '140', measurand: 'SoC', unit: 'Percent' },
      ],
    });
    expect(r).toEqual({ timestamp: at, energyWh: null, powerW: null, socPercent: null });
  });

  it('reads SoC, and keeps the latest of each quantity across several samples', () => {
    const r = latestReading([
      { timestamp: at, sampledValue: [{ value: '100' }, { value: '40', measurand: 'SoC' }] },
      { timestamp: '2026-11-22T10:01:00.000Z', sampledValue: [{ value: '250' }] },
    ]);
    expect(r).toEqual({
      timestamp: '2026-11-22T10:01:00.000Z',
      energyWh: 250,
      powerW: null,
      socPercent: 40,
    });
    expect(latestReading([])).toBeNull();
  });
});
