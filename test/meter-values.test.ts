import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { latestReading, readMeterValue } from '../src/ocpp/v16/meter-values.js';
import { latestReading201, readMeterValue201, registerAt } from '../src/ocpp/v201/meter-values.js';

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

describe('OCPP 2.0.1 meter values', () => {
  it('applies unitOfMeasure: Wh by default, kWh, and a power-of-ten multiplier', () => {
    const read = (value: number, unitOfMeasure?: { unit?: string; multiplier?: number }) =>
      readMeterValue201({ timestamp: at, sampledValue: [{ value, unitOfMeasure }] }).energyWh;
    expect(read(1234)).toBe(1234);
    expect(read(12.5, { unit: 'kWh' })).toBe(12_500);
    expect(read(12.5, { unit: 'Wh', multiplier: 3 })).toBe(12_500);
    expect(read(1.25, { unit: 'kWh', multiplier: 1 })).toBe(12_500);
    expect(read(125_000, { multiplier: -1 })).toBe(12_500);
    expect(read(5, { unit: 'varh' })).toBeNull();
  });

  it('reads power in kW with a multiplier, and SoC wherever it was measured', () => {
    const r = readMeterValue201({
      timestamp: at,
      sampledValue: [
        { value: 7.4, measurand: 'Power.Active.Import', unitOfMeasure: { unit: 'kW' } },
        { value: 55, measurand: 'SoC', location: 'EV', unitOfMeasure: { unit: 'Percent' } },
      ],
    });
    expect(r.powerW).toBeCloseTo(7400);
    expect(r.socPercent).toBe(55);
  });

  it('finds the register of the transaction begin and end contexts', () => {
    const values = [
      {
        timestamp: at,
        sampledValue: [{ value: 10, context: 'Transaction.Begin', unitOfMeasure: { unit: 'kWh' } }],
      },
      { timestamp: at, sampledValue: [{ value: 10_400, context: 'Sample.Periodic' }] },
      { timestamp: at, sampledValue: [{ value: 10_900, context: 'Transaction.End' }] },
    ];
    expect(registerAt(values, 'Transaction.Begin')).toBe(10_000);
    expect(registerAt(values, 'Transaction.End')).toBe(10_900);
    expect(registerAt(values.slice(1, 2), 'Transaction.End')).toBeNull();
    expect(latestReading201(values)?.energyWh).toBe(10_900);
  });

  it('reads the same register in 1.6 and 2.0.1 for any Wh value, whatever the unit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 9 }), (wh) => {
        const v16 = readMeterValue({
          timestamp: at,
          sampledValue: [{ value: String(wh / 1000), unit: 'kWh' }],
        });
        const v201 = readMeterValue201({
          timestamp: at,
          sampledValue: [{ value: wh / 1000, unitOfMeasure: { unit: 'Wh', multiplier: 3 } }],
        });
        expect(v201.energyWh).toBe(wh);
        expect(v16.energyWh).toBe(wh);
      }),
    );
  });
});

describe('the register is read where the driver is sold energy: the Outlet', () => {
  const OTHER = ['Inlet', 'Body', 'Cable', 'EV'];
  const register = (value: number, location?: string, phase?: string) => ({
    value: String(value),
    measurand: 'Energy.Active.Import.Register',
    unit: 'Wh',
    ...(location !== undefined && { location }),
    ...(phase !== undefined && { phase }),
  });

  it('reads the Outlet register and power when the Inlet is listed first (1.6 and 2.0.1)', () => {
    const power = (value: number, location: string) => ({
      value: String(value),
      measurand: 'Power.Active.Import',
      unit: 'W',
      location,
    });
    const sampledValue = [
      register(10_600, 'Inlet'),
      power(7_800, 'Inlet'),
      register(10_000, 'Outlet'),
      power(7_400, 'Outlet'),
    ];
    expect(readMeterValue({ timestamp: at, sampledValue })).toEqual({
      timestamp: at,
      energyWh: 10_000,
      powerW: 7_400,
      socPercent: null,
    });
    const r201 = readMeterValue201({
      timestamp: at,
      sampledValue: sampledValue.map((v) => ({ ...v, value: Number(v.value) })),
    });
    expect([r201.energyWh, r201.powerW, r201.energyLocation]).toEqual([10_000, 7_400, undefined]);
  });

  it('sums the Outlet phases rather than take another location total', () => {
    const r = readMeterValue({
      timestamp: at,
      sampledValue: [
        register(9_999, 'Inlet'),
        ...['L1', 'L2', 'L3'].map((phase) => register(1_000, 'Outlet', phase)),
      ],
    });
    expect(r.energyWh).toBe(3_000);
  });

  it('an unreadable Outlet value is no reading, not a reason to read the Inlet', () => {
    const r = readMeterValue({
      timestamp: at,
      sampledValue: [register(10_600, 'Inlet'), { ...register(0, 'Outlet'), value: 'n/a' }],
    });
    expect(r.energyWh).toBeNull();
  });

  it('reads the only register there is, nearest the vehicle first, and says where', () => {
    const read = (...locations: string[]) =>
      readMeterValue({
        timestamp: at,
        sampledValue: locations.map((l, i) => register(1_000 * (i + 1), l)),
      });
    expect(read('Inlet')).toMatchObject({ energyWh: 1_000, energyLocation: 'Inlet' });
    expect(read('Inlet', 'Body')).toMatchObject({ energyWh: 2_000, energyLocation: 'Body' });
    expect(read('Inlet', 'Cable', 'Body')).toMatchObject({
      energyWh: 2_000,
      energyLocation: 'Cable',
    });
    expect(
      latestReading([
        { timestamp: at, sampledValue: [register(1_000, 'Inlet')] },
        { timestamp: at, sampledValue: [{ value: '40', measurand: 'SoC', location: 'EV' }] },
      ]),
    ).toMatchObject({ energyWh: 1_000, socPercent: 40, energyLocation: 'Inlet' });
  });

  it('whatever else is listed, in any order, the Outlet (or unlocated) register is read', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 ** 9 }),
        fc.constantFrom<string | undefined>('Outlet', undefined),
        fc.array(
          fc.record({
            location: fc.constantFrom(...OTHER),
            wh: fc.integer({ min: 0, max: 10 ** 9 }),
          }),
          { maxLength: 6 },
        ),
        fc.nat(),
        (wh, outlet, others, at16) => {
          const values = others.map((o) => register(o.wh, o.location));
          values.splice(at16 % (values.length + 1), 0, register(wh, outlet));
          const v16 = readMeterValue({ timestamp: at, sampledValue: values });
          const v201 = readMeterValue201({
            timestamp: at,
            sampledValue: values.map((v) => ({ ...v, value: Number(v.value) })),
          });
          expect([v16.energyWh, v16.energyLocation]).toEqual([wh, undefined]);
          expect([v201.energyWh, v201.energyLocation]).toEqual([wh, undefined]);
        },
      ),
    );
  });
});
