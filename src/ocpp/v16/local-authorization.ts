import type { LocalAuthCapability, LocalAuthSettings } from '../port.js';
import type { LocalAuthCalls } from '../protocol-adapter.js';
import type { CallTarget } from '../calls/operator-call.js';
import { ensureSetting, positiveSetting } from '../calls/local-auth-settings.js';
import { stepOf } from '../calls/step-outcome.js';
import { sendChangeConfiguration } from './calls/change-configuration.js';
import { clearCache } from './calls/clear-cache.js';
import { configurationValue, readConfiguration } from './calls/get-configuration.js';
import { getLocalListVersion } from './calls/get-local-list-version.js';
import { sendLocalList } from './calls/send-local-list.js';

const PROFILES = 'SupportedFeatureProfiles';
const LIST_ENABLED = 'LocalAuthListEnabled';
const LIST_MAX = 'LocalAuthListMaxLength';
const SEND_MAX = 'SendLocalListMaxLength';
const OFFLINE = 'LocalAuthorizeOffline';
const CACHE = 'AuthorizationCacheEnabled';
const UNKNOWN_OFFLINE = 'AllowOfflineTxForUnknownId';
/** 1.6 idTag is CiString20. */
const ID_TAG_LENGTH = 20;

/**
 * A 1.6 charger's local list (Local Auth List Management profile) and cache: the profile or
 * LocalAuthListEnabled says it has a list; AuthorizationCacheEnabled false turns its cache off
 * where the key exists and is writable, and a charger without the key is taken to cache.
 * LocalAuthorizeOffline is true only where the operator allows offline starts and the list is
 * the charger's only offline authority; AllowOfflineTxForUnknownId, where present, is false.
 */
export function localAuthorization16(target: CallTarget): LocalAuthCalls {
  return {
    async prepare(settings: LocalAuthSettings): Promise<LocalAuthCapability> {
      const held = await readConfiguration(target, [
        PROFILES,
        LIST_ENABLED,
        LIST_MAX,
        SEND_MAX,
        OFFLINE,
        CACHE,
        UNKNOWN_OFFLINE,
      ]);
      const value = (key: string) => configurationValue(held, key);
      const profiles = (value(PROFILES) ?? '').split(',').map((p) => p.trim().toLowerCase());
      const listSupported =
        profiles.includes('localauthlistmanagement') || value(LIST_ENABLED) !== null;
      const change = (key: string, wanted: string) => () =>
        sendChangeConfiguration(target, key, wanted);
      const refused: string[] = [];
      const ensure = async (key: string, wanted: string) => {
        if (!(await ensureSetting(value(key), wanted, change(key, wanted)))) refused.push(key);
      };
      if (listSupported) await ensure(LIST_ENABLED, String(settings.listEnabled));
      const cacheOff = await ensureSetting(value(CACHE), 'false', change(CACHE, 'false'));
      if (!cacheOff && value(CACHE) !== null) refused.push(CACHE);
      // Offline, the charger's list must be its only authority: not a cache the gateway cannot
      // clear while the link is down, nor any card it has never seen.
      const offline = settings.offlineStarts && listSupported && settings.listEnabled && cacheOff;
      await ensure(OFFLINE, String(offline));
      if (value(UNKNOWN_OFFLINE) !== null) await ensure(UNKNOWN_OFFLINE, 'false');
      return {
        listSupported,
        maxEntries: positiveSetting(value(LIST_MAX)),
        itemsPerMessage: positiveSetting(value(SEND_MAX)),
        bytesPerMessage: null,
        maxTokenLength: ID_TAG_LENGTH,
        cache: cacheOff ? 'disabled' : 'enabled',
        refused,
      };
    },
    listVersion: () => getLocalListVersion(target),
    sendList: (update) => sendLocalList(target, update),
    clearCache: async () => stepOf(await clearCache(target)),
  };
}
