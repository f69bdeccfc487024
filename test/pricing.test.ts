import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costDown, microNgnPerWh, paidEnergyWh, priceUp, settle } from '../src/pricing/money.js';
import { quoteFullCharge } from '../src/pricing/quote.js';

const price = fc.integer({ min: 1, max: 10_000_000 }); // micro-NGN per Wh: up to 10,000 NGN/kWh
const amount = fc.integer({ min: 1, max: 100_000_000 });
const energy = fc.integer({ min: 0, max: 100_000_000 });

describe('tariff conversion', () => {
  it('keeps up to 3 decimals exactly', () => {
    expect(microNgnPerWh(412.5)).toBe(412_500);
    expect(microNgnPerWh(0.001)).toBe(1);
    expect(microNgnPerWh(250)).toBe(250_000);
    expect(microNgnPerWh(199.999)).toBe(199_999);
  });
  it('refuses prices it cannot hold exactly', () => {
    expect(() => microNgnPerWh(0.0001)).toThrow(RangeError);
    expect(() => microNgnPerWh(12.3456)).toThrow(RangeError);
    expect(() => microNgnPerWh(-1)).toThrow(RangeError);
  });
});

describe('money rules hold for all inputs', () => {
  it('the paid energy never costs more than was paid, and one more Wh would', () => {
    fc.assert(
      fc.property(amount, price, (a, p) => {
        const wh = paidEnergyWh(a, p);
        expect(costDown(wh, p)).toBeLessThanOrEqual(a);
        expect(priceUp(wh, p)).toBeLessThanOrEqual(a);
        expect((wh + 1) * p).toBeGreaterThan(a * 1_000_000);
      }),
    );
  });

  it('settlement: cost + credit = paid, 0 <= cost <= paid, never more than the energy is worth', () => {
    fc.assert(
      fc.property(amount, energy, price, (a, wh, p) => {
        const s = settle(a, wh, p);
        expect(s.cost + s.credit).toBe(a);
        expect(s.cost).toBeGreaterThanOrEqual(0);
        expect(s.cost).toBeLessThanOrEqual(a);
        expect(s.cost * 1_000_000).toBeLessThanOrEqual(wh * p);
        expect(Number.isInteger(s.cost) && Number.isInteger(s.credit)).toBe(true);
      }),
    );
  });

  it('settlement is monotonic: more energy never costs less', () => {
    fc.assert(
      fc.property(amount, energy, energy, price, (a, e1, e2, p) => {
        const [lo, hi] = e1 <= e2 ? [e1, e2] : [e2, e1];
        expect(settle(a, lo, p).cost).toBeLessThanOrEqual(settle(a, hi, p).cost);
      }),
    );
  });

  it('delivering exactly the paid energy leaves less than one Wh worth of credit', () => {
    fc.assert(
      fc.property(amount, price, (a, p) => {
        const s = settle(a, paidEnergyWh(a, p), p);
        expect(s.credit * 1_000_000).toBeLessThan(2 * p + 1_000_000);
      }),
    );
  });

  it('a quote always covers the energy it names, by less than one naira', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 300_000 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        price,
        fc.integer({ min: 50, max: 100 }),
        (batteryWh, soc, p, eff) => {
          const q = quoteFullCharge({
            vehicle: { model: 'x', batteryWh },
            socPercent: soc,
            microNgnPerWh: p,
            efficiencyPercent: eff,
          });
          expect(q.amount * 1_000_000).toBeGreaterThanOrEqual(q.energyWh * p);
          expect((q.amount - 1) * 1_000_000).toBeLessThan(q.energyWh * p);
          expect(q.energyWh * eff * 1000).toBeGreaterThanOrEqual(
            batteryWh * (1000 - q.socPercent * 10) * 100 - 1e-6,
          );
        },
      ),
    );
  });
});

describe('quote formula', () => {
  it('energy to full = capacity x (100 - SoC)% / efficiency, price rounded up', () => {
    // 77.4 kWh at 35 %: 50,310 Wh into the battery, / 0.9 = 55,900 Wh metered; x 412.5 NGN/kWh
    const q = quoteFullCharge({
      vehicle: { model: 'Hyundai Ioniq 5', batteryWh: 77_400 },
      socPercent: 35,
      microNgnPerWh: 412_500,
      efficiencyPercent: 90,
    });
    expect(q).toEqual({ socPercent: 35, energyWh: 55_900, amount: 23_059 });
  });
  it('with no SoC reported, quotes the whole battery', () => {
    const q = quoteFullCharge({
      vehicle: { model: 'x', batteryWh: 60_000 },
      socPercent: undefined,
      microNgnPerWh: 250_000,
      efficiencyPercent: 100,
    });
    expect(q).toEqual({ socPercent: 0, energyWh: 60_000, amount: 15_000 });
  });
  it('a full battery quotes zero', () => {
    const q = quoteFullCharge({
      vehicle: { model: 'x', batteryWh: 60_000 },
      socPercent: 100,
      microNgnPerWh: 250_000,
      efficiencyPercent: 90,
    });
    expect(q.amount).toBe(0);
  });
});
