// Charging model of a DC charger feeding an EV battery.
//
// The vehicle accepts its full power up to 80 % SoC, then tapers linearly down to 10 % of its
// maximum at 100 % (the shape of typical DC fast-charging curves). The charger delivers the lower
// of its own cap and what the vehicle accepts, so a car that can take more than the charger
// offers stays at the charger's cap well past 80 %, as on real hardware.
//
// The meter sits on the charger side, so the register counts grid energy; only 92 % of it reaches
// the battery (conversion and battery losses). SoC therefore rises by 0.92 x metered energy.
//
// SoC follows dSoC/dt = k * min(chargerCap, vehicleMax * taper(SoC)), which is linear in the
// constant-power stretch and exponential in the taper stretch. Both are solved in closed form,
// so the result does not depend on how often the simulator samples it.

export const CHARGING_EFFICIENCY = 0.92;
export const TAPER_START_SOC = 80;
export const TAPER_END_FRACTION = 0.1;
const TAPER_SLOPE = (1 - TAPER_END_FRACTION) / (100 - TAPER_START_SOC);
// SoC at which the linear taper would reach zero power; the exponential approaches it.
const TAPER_ASYMPTOTE = TAPER_START_SOC + 1 / TAPER_SLOPE;

export interface ChargeCurve {
  chargerMaxPowerW: number;
  vehicleMaxPowerW: number;
  batteryKwh: number;
}

function taper(socPercent: number): number {
  return socPercent <= TAPER_START_SOC ? 1 : 1 - TAPER_SLOPE * (socPercent - TAPER_START_SOC);
}

/** Power drawn from the grid at this SoC, in W. */
export function chargingPowerW(curve: ChargeCurve, socPercent: number): number {
  if (socPercent >= 100) return 0;
  return Math.min(curve.chargerMaxPowerW, curve.vehicleMaxPowerW * taper(socPercent));
}

/** SoC percentage points gained per second per watt drawn from the grid. */
function socRatePerWatt(curve: ChargeCurve): number {
  return (CHARGING_EFFICIENCY * 100) / (curve.batteryKwh * 1000 * 3600);
}

/** SoC where the vehicle's tapered acceptance drops below the charger cap. */
function kneeSoc(curve: ChargeCurve): number {
  if (curve.chargerMaxPowerW >= curve.vehicleMaxPowerW) return TAPER_START_SOC;
  const ratio = curve.chargerMaxPowerW / curve.vehicleMaxPowerW;
  return Math.min(100, TAPER_START_SOC + (1 - ratio) / TAPER_SLOPE);
}

function constantStretchRate(curve: ChargeCurve): number {
  return Math.min(curve.chargerMaxPowerW, curve.vehicleMaxPowerW) * socRatePerWatt(curve);
}

function taperDecayPerSecond(curve: ChargeCurve): number {
  return socRatePerWatt(curve) * curve.vehicleMaxPowerW * TAPER_SLOPE;
}

/** SoC after charging for the given simulated seconds. */
export function advanceSoc(curve: ChargeCurve, socPercent: number, seconds: number): number {
  let soc = socPercent;
  let remaining = seconds;
  if (soc >= 100 || remaining <= 0) return Math.min(soc, 100);

  const knee = kneeSoc(curve);
  if (soc < knee) {
    const rate = constantStretchRate(curve);
    if (rate <= 0) return soc;
    const toKnee = (knee - soc) / rate;
    if (remaining < toKnee) return soc + rate * remaining;
    soc = knee;
    remaining -= toKnee;
  }
  if (soc >= 100) return 100;

  const decay = taperDecayPerSecond(curve);
  if (decay <= 0) return soc;
  // Compare times rather than SoC so a timer set for secondsUntilFull() lands exactly on 100.
  if (remaining >= taperSecondsToFull(soc, decay)) return 100;
  return TAPER_ASYMPTOTE - (TAPER_ASYMPTOTE - soc) * Math.exp(-decay * remaining);
}

function taperSecondsToFull(socPercent: number, decay: number): number {
  return taperSeconds(socPercent, 100, decay);
}

function taperSeconds(socPercent: number, targetPercent: number, decay: number): number {
  return Math.log((TAPER_ASYMPTOTE - socPercent) / (TAPER_ASYMPTOTE - targetPercent)) / decay;
}

/** Simulated seconds until the battery is full; Infinity if no power flows. */
export function secondsUntilFull(curve: ChargeCurve, socPercent: number): number {
  return secondsUntilSoc(curve, socPercent, 100);
}

/** Simulated seconds until the SoC reaches `targetPercent` (<= 100); Infinity if it never does. */
export function secondsUntilSoc(
  curve: ChargeCurve,
  socPercent: number,
  targetPercent: number,
): number {
  const target = Math.min(100, targetPercent);
  if (socPercent >= target) return 0;
  let soc = socPercent;
  let seconds = 0;
  const knee = kneeSoc(curve);
  if (soc < knee) {
    const rate = constantStretchRate(curve);
    if (rate <= 0) return Infinity;
    if (target <= knee) return seconds + (target - soc) / rate;
    seconds += (knee - soc) / rate;
    soc = knee;
  }
  if (soc >= target) return seconds;
  const decay = taperDecayPerSecond(curve);
  if (decay <= 0) return Infinity;
  return seconds + taperSeconds(soc, target, decay);
}

/** SoC points that the given grid energy (Wh) adds to the battery. */
export function socGainOf(curve: ChargeCurve, energyWh: number): number {
  return (energyWh * CHARGING_EFFICIENCY * 100) / (curve.batteryKwh * 1000);
}

/** Grid energy (what the meter counts) needed to raise SoC by the given points, in Wh. */
export function meteredEnergyWh(curve: ChargeCurve, socGainPercent: number): number {
  return ((socGainPercent / 100) * (curve.batteryKwh * 1000)) / CHARGING_EFFICIENCY;
}
