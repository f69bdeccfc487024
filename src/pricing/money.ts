/**
 * Energy <-> money arithmetic. Money is whole NGN; tariffs are exact integers in micro-NGN per Wh
 * (1 NGN/kWh = 1,000 micro-NGN/Wh), so a tariff of 412.5 NGN/kWh is held as 412,500 exactly.
 * Products go through BigInt so no intermediate value can lose precision.
 *
 * Rounding, once per figure and always in the driver's favour where money is taken:
 * - a quote rounds up (it must cover the energy it names);
 * - paid energy rounds down (never promise energy that was not paid for);
 * - the settled cost rounds down (never charge for a fraction of a naira not delivered),
 *   and is capped at what was paid (overshoot is never charged).
 */
const MICRO = 1_000_000n;

export const MICRO_NGN_PER_WH_PER_NGN_PER_KWH = 1000;

/** Converts a configured NGN/kWh price (at most 3 decimals) to exact micro-NGN per Wh. */
export function microNgnPerWh(ngnPerKwh: number): number {
  const micro = Math.round(ngnPerKwh * MICRO_NGN_PER_WH_PER_NGN_PER_KWH);
  if (micro <= 0 || Math.abs(micro - ngnPerKwh * MICRO_NGN_PER_WH_PER_NGN_PER_KWH) > 1e-6) {
    throw new RangeError(`price ${ngnPerKwh} NGN/kWh must be positive with at most 3 decimals`);
  }
  return micro;
}

function assertWh(wh: number, name: string): void {
  if (!Number.isSafeInteger(wh) || wh < 0) throw new RangeError(`${name} must be a whole Wh >= 0`);
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** Price of `wh` watt-hours, rounded up to whole NGN (quotes). */
export function priceUp(wh: number, microPerWh: number): number {
  assertWh(wh, 'energy');
  return Number(ceilDiv(BigInt(wh) * BigInt(microPerWh), MICRO));
}

/** Cost of `wh` delivered watt-hours, rounded down to whole NGN (settlement). */
export function costDown(wh: number, microPerWh: number): number {
  assertWh(wh, 'energy');
  return Number((BigInt(wh) * BigInt(microPerWh)) / MICRO);
}

/** Most energy `amount` NGN pays for, rounded down to whole Wh. */
export function paidEnergyWh(amount: number, microPerWh: number): number {
  return Number((BigInt(amount) * MICRO) / BigInt(microPerWh));
}

export interface Settlement {
  deliveredWh: number;
  cost: number;
  credit: number;
}

/** What a session costs and what goes back to the wallet; cost never exceeds what was paid. */
export function settle(paid: number, deliveredWh: number, microPerWh: number): Settlement {
  const cost = Math.min(paid, costDown(deliveredWh, microPerWh));
  return { deliveredWh, cost, credit: paid - cost };
}
