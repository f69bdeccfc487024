import type { LocalAuthCapability, LocalAuthSettings } from '../port.js';
import type { LocalAuthCalls } from '../protocol-adapter.js';
import type { CallTarget } from '../calls/operator-call.js';
import { applyLocalAuthSettings, positiveSetting } from '../calls/local-auth-settings.js';
import { stepOf } from '../calls/step-outcome.js';
import { sendChangeConfiguration } from './calls/change-configuration.js';
import { clearCache } from './calls/clear-cache.js';
import { configurationValue, readConfiguration } from './calls/get-configuration.js';
import { getLocalListVersion } from './calls/get-local-list-version.js';
import { sendLocalList } from './calls/send-local-list.js';

const NAMES = {
  listEnabled: 'LocalAuthListEnabled',
  cache: 'AuthorizationCacheEnabled',
  offline: 'LocalAuthorizeOffline',
  unknownOffline: 'AllowOfflineTxForUnknownId',
};
const PROFILES = 'SupportedFeatureProfiles';
const LIST_MAX = 'LocalAuthListMaxLength';
const SEND_MAX = 'SendLocalListMaxLength';
/** 1.6 idTag is CiString20. */
const ID_TAG_LENGTH = 20;

/**
 * A 1.6 charger's local list (Local Auth List Management profile) and cache: the profile or
 * LocalAuthListEnabled says it has a list; AuthorizationCacheEnabled false turns its cache off
 * where the key exists and is writable, and a charger without the key is taken to cache
 * (calls/local-auth-settings.ts says which settings and why).
 */
export function localAuthorization16(target: CallTarget): LocalAuthCalls {
  return {
    async prepare(settings: LocalAuthSettings): Promise<LocalAuthCapability> {
      const held = await readConfiguration(target, [
        PROFILES,
        LIST_MAX,
        SEND_MAX,
        ...Object.values(NAMES),
      ]);
      const value = (key: string) => configurationValue(held, key);
      const profiles = (value(PROFILES) ?? '').split(',').map((p) => p.trim().toLowerCase());
      const listSupported =
        profiles.includes('localauthlistmanagement') || value(NAMES.listEnabled) !== null;
      const applied = await applyLocalAuthSettings(
        NAMES,
        { value, change: (key, wanted) => sendChangeConfiguration(target, key, wanted) },
        settings,
        listSupported,
      );
      return {
        listSupported,
        maxEntries: positiveSetting(value(LIST_MAX)),
        itemsPerMessage: positiveSetting(value(SEND_MAX)),
        bytesPerMessage: null,
        maxTokenLength: ID_TAG_LENGTH,
        ...applied,
      };
    },
    listVersion: () => getLocalListVersion(target),
    sendList: (update) => sendLocalList(target, update),
    clearCache: async () => stepOf(await clearCache(target)),
  };
}
