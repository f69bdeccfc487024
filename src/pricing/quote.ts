import { priceUp } from './money.js';

export interface VehicleProfile {
  model: string;
  batteryWh: number;
}

export interface QuoteInput {
  vehicle: VehicleProfile;
  /** State of charge in percent; undefined when nothing reported it (the whole battery is quoted). */
  socPercent: number | undefined;
  microNgnPerWh: number;
  /** Share of the metered energy that reaches the battery, in percent (charging losses). */
  efficiencyPercent: number;
}

export interface QuoteFigures {
  socPercent: number;
  energyWh: number;
  amount: number;
}

/**
 * Energy to full = capacity x (100 - SoC)% / efficiency, rounded up to whole Wh; the price of
 * that energy is rounded up to whole NGN. SoC is taken to one decimal.
 */
export function quoteFullCharge(input: QuoteInput): QuoteFigures {
  const soc = input.socPercent === undefined ? 0 : Math.min(100, Math.max(0, input.socPercent));
  const socTenths = Math.round(soc * 10);
  const missingTenths = BigInt(1000 - socTenths);
  // capacity * (missing/1000) * (100/efficiency), as one integer ceiling division
  const numerator = BigInt(input.vehicle.batteryWh) * missingTenths * 100n;
  const denominator = 1000n * BigInt(input.efficiencyPercent);
  const energyWh = Number((numerator + denominator - 1n) / denominator);
  return {
    socPercent: socTenths / 10,
    energyWh,
    amount: priceUp(energyWh, input.microNgnPerWh),
  };
}
