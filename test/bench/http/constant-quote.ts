/** The constant quote both reference servers answer (test/bench/http/bare-api.ts, shell-api.ts). */
export const CONSTANT_QUOTE = {
  fleetDriver: true,
  quotedAmount: 31_930,
  currency: 'NGN',
  subWalletBalance: 1_000_000,
  socPercent: 0,
  vehicleModel: 'Generic EV',
  socSource: 'unknown',
  socReportedAt: null,
  energyWh: 77_400,
  pricePerKwh: 412.5,
};
