import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TransactionCost } from '../simulators/ocpp21/tariff.js';
import type { Tariff } from '../simulators/ocpp21/tariff.js';
import { MeteredOutlet } from '../simulators/shared/metered-outlet.js';
import { advanceSoc, secondsUntilSoc } from '../simulators/shared/vehicle-physics.js';

// The rules the 2.1 station's enforcement rests on, for all inputs: the time it computes to a
// state of charge is the time the physics take to reach it; its meter never passes the cap it
// set, however its accruals fall; and the energy it allows for a cost limit costs no more than
// the limit, one Wh more would.

const curves = fc.record({
  chargerMaxPowerW: fc.integer({ min: 1_000, max: 350_000 }),
  vehicleMaxPowerW: fc.integer({ min: 1_000, max: 350_000 }),
  batteryKwh: fc.double({ min: 10, max: 200, noNaN: true }),
});

/** An outlet whose protocol side always lets energy flow. */
class FreeOutlet extends MeteredOutlet {
  protected get inTransaction(): boolean {
    return true;
  }
  protected get chargingAllowed(): boolean {
    return true;
  }
}

describe('2.1 limit enforcement, for all inputs', () => {
  it('secondsUntilSoc is the time advanceSoc takes to reach that SoC', () => {
    fc.assert(
      fc.property(
        curves,
        fc.double({ min: 0, max: 99, noNaN: true }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (curve, soc, fraction) => {
          const target = soc + (100 - soc) * fraction;
          const seconds = secondsUntilSoc(curve, soc, target);
          expect(advanceSoc(curve, soc, seconds)).toBeCloseTo(target, 6);
        },
      ),
    );
  });

  it('the meter stops at its cap exactly, whatever the accrual instants', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40_000 }),
        fc.array(fc.double({ min: 0, max: 5_000, noNaN: true }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 7_000, max: 150_000 }),
        (capWh, stepsMs, powerW) => {
          const outlet = new FreeOutlet(1, 1_000_000, powerW, 600);
          outlet.plug({ model: 'EV', batteryKwh: 100, socPercent: 5, maxPowerW: powerW });
          const start = performance.now();
          outlet.capEnergy(1_000_000 + capWh);
          let at = start;
          for (const step of stepsMs) {
            at += step;
            outlet.accrue(at);
            expect(outlet.registerWh).toBeLessThanOrEqual(1_000_000 + capWh);
          }
          // Long enough at any of these powers: the register is the cap, the flow has stopped.
          outlet.accrue(at + 3_600_000);
          expect(outlet.registerWh).toBe(1_000_000 + capWh);
          expect(outlet.energyCapReached).toBe(true);
          expect(outlet.powerW).toBe(0);
        },
      ),
    );
  });

  it('the energy a cost limit allows costs at most the limit, one Wh more costs at least it', () => {
    const tariffs = fc.record({
      priceKwh: fc.integer({ min: 1, max: 200_000 }).map((cents) => cents / 100),
      fixed: fc.option(fc.integer({ min: 0, max: 50_000 }).map((cents) => cents / 100)),
      tax: fc.option(fc.integer({ min: 0, max: 25 })),
    });
    fc.assert(
      fc.property(tariffs, fc.integer({ min: 1, max: 1_000_000 }), (t, maxCost) => {
        const tariff: Tariff = {
          tariffId: 'T',
          currency: 'NGN',
          energy: {
            prices: [{ priceKwh: t.priceKwh }],
            ...(t.tax === null ? {} : { taxRates: [{ type: 'VAT', tax: t.tax }] }),
          },
          ...(t.fixed === null ? {} : { fixedFee: { prices: [{ priceFixed: t.fixed }] } }),
        };
        const cost = new TransactionCost(tariff, new Date().toISOString());
        fc.pre(cost.totalInclTax(0) <= maxCost);
        const energyWh = cost.energyForCost(maxCost);
        expect(cost.totalInclTax(energyWh)).toBeLessThanOrEqual(maxCost);
        expect(cost.totalInclTax(energyWh + 1)).toBeGreaterThanOrEqual(maxCost);
      }),
    );
  });

  it('a tariff changed mid-transaction prices the energy from the change on', () => {
    const first: Tariff = {
      tariffId: 'A',
      currency: 'NGN',
      energy: { prices: [{ priceKwh: 100 }] },
    };
    const second: Tariff = {
      tariffId: 'B',
      currency: 'NGN',
      energy: { prices: [{ priceKwh: 300 }] },
    };
    const cost = new TransactionCost(first, '2026-12-06T09:00:00.000Z');
    cost.change(second, '2026-12-06T09:10:00.000Z', 2_000);
    // 2 kWh at 100, 1 kWh at 300.
    expect(cost.totalInclTax(3_000)).toBe(500);
    // 200 NGN spent at the change: the other 800 buy 800 / 300 kWh more, 2,666 Wh.
    expect(cost.energyForCost(1_000)).toBe(4_666);
    expect(cost.details(3_000, 600, 60).chargingPeriods).toEqual([
      {
        tariffId: 'A',
        startPeriod: '2026-12-06T09:00:00.000Z',
        dimensions: [{ type: 'Energy', volume: 2_000 }],
      },
      {
        tariffId: 'B',
        startPeriod: '2026-12-06T09:10:00.000Z',
        dimensions: [{ type: 'Energy', volume: 1_000 }],
      },
    ]);
  });

  it('prices to the hundredth as decimal arithmetic does: a half hundredth rounds up', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 500_000 }),
        (priceHundredths, fixedHundredths, energyWh) => {
          const tariff: Tariff = {
            tariffId: 'T',
            currency: 'NGN',
            energy: { prices: [{ priceKwh: priceHundredths / 100 }] },
            fixedFee: { prices: [{ priceFixed: fixedHundredths / 100 }] },
          };
          const cost = new TransactionCost(tariff, '2026-12-06T09:00:00.000Z');
          // Exact: price (hundredths per kWh) × Wh / 1000 hundredths, half up, in integers.
          const scaled = BigInt(priceHundredths) * BigInt(energyWh);
          const energy = (scaled + 500n) / 1000n;
          const total = Number(energy + BigInt(fixedHundredths));
          expect(cost.totalInclTax(energyWh)).toBe(total / 100);
        },
      ),
      { numRuns: 2_000 },
    );
    // The case CI met: 434 Wh at 412.50 NGN/kWh is 179.025 NGN, which is 179.03.
    const tariff: Tariff = {
      tariffId: 'DC-NGN',
      currency: 'NGN',
      energy: { prices: [{ priceKwh: 412.5 }] },
      fixedFee: { prices: [{ priceFixed: 100 }] },
    };
    expect(new TransactionCost(tariff, '2026-12-06T09:00:00.000Z').totalInclTax(434)).toBe(279.03);
  });
});
