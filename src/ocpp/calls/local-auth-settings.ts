import type { ChargerReply } from '../port.js';
import { settingHeld } from '../charger-state/setting-held.js';

/** A positive integer setting as a charger wrote it, or null (absent, 0, not a number). */
export function positiveSetting(value: string | null): number | null {
  if (value === null) return null;
  const n = Number(value.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * One local-authorization setting, changed only when the charger does not hold it already:
 * whether it holds the wanted value after (a needless change costs a round trip; an unknown
 * setting is not sent at all and counts as not held).
 */
export async function ensureSetting(
  held: string | null,
  wanted: string,
  change: () => Promise<ChargerReply>,
): Promise<boolean> {
  if (settingHeld(held, wanted)) return true;
  if (held === null) return false;
  const reply = await change();
  return reply.status === 'Accepted' || reply.status === 'RebootRequired';
}
