import { measurandList } from '../metering/metering.js';

/**
 * Whether a charger already holds a setting the gateway wants, as its own read reported it. The
 * comparison forgives how chargers write values back: case ("True"), spacing and order in a
 * comma list ("SoC, Energy.Active.Import.Register"), and number spelling ("10.0"). Anything it
 * cannot read as the same is sent again; a needless change costs one round trip, a missed one
 * a charger that meters wrongly.
 */
export function settingHeld(current: string | null, wanted: string): boolean {
  if (current === null) return false;
  const a = current.trim();
  const b = wanted.trim();
  if (a.toLowerCase() === b.toLowerCase()) return true;
  if (a !== '' && b !== '' && Number.isFinite(Number(a)) && Number.isFinite(Number(b))) {
    return Number(a) === Number(b);
  }
  if (!b.includes(',')) return false;
  const items = (v: string) => new Set(measurandList(v.toLowerCase()));
  const have = items(a);
  const want = items(b);
  return have.size === want.size && [...want].every((m) => have.has(m));
}
