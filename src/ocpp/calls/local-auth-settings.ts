import type { ChargerReply, LocalAuthSettings } from '../port.js';
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

/** One protocol's names for the local-authorization settings. */
export interface LocalAuthNames {
  listEnabled: string;
  cache: string;
  offline: string;
  unknownOffline: string;
}

/** What a charger holds of its settings, as read, and how to change one. */
export interface HeldSettings {
  value(key: string): string | null;
  change(key: string, value: string): Promise<ChargerReply>;
}

/**
 * The settings both protocols apply alike: the list on (or off, as asked) where the charger has
 * one; the cache off; offline starts only where the operator allows them, the list is on and the
 * cache off, since offline the list must be the charger's only authority (not a cache the gateway
 * cannot clear while the link is down, nor a card it has never seen); starts of unknown ids while
 * offline off where the charger has the setting. `noCache`: it has no cache at all.
 */
export async function applyLocalAuthSettings(
  names: LocalAuthNames,
  held: HeldSettings,
  settings: LocalAuthSettings,
  listSupported: boolean,
  noCache = false,
): Promise<{ cache: 'disabled' | 'enabled'; refused: string[] }> {
  const refused: string[] = [];
  const set = (key: string, wanted: string) =>
    ensureSetting(held.value(key), wanted, () => held.change(key, wanted));
  const ensure = async (key: string, wanted: string) => {
    if (!(await set(key, wanted))) refused.push(key);
  };
  if (listSupported) await ensure(names.listEnabled, String(settings.listEnabled));
  const cacheOff = noCache || (await set(names.cache, 'false'));
  if (!cacheOff && held.value(names.cache) !== null) refused.push(names.cache);
  const offline = settings.offlineStarts && listSupported && settings.listEnabled && cacheOff;
  await ensure(names.offline, String(offline));
  if (held.value(names.unknownOffline) !== null) await ensure(names.unknownOffline, 'false');
  return { cache: cacheOff ? 'disabled' : 'enabled', refused };
}
