import type { LocalAuthCapability, LocalAuthSettings } from '../port.js';
import type { LocalAuthCalls } from '../protocol-adapter.js';
import type { CallTarget } from '../calls/operator-call.js';
import { applyLocalAuthSettings, positiveSetting } from '../calls/local-auth-settings.js';
import { stepOf } from '../calls/step-outcome.js';
import { clearCache } from './calls/clear-cache.js';
import { getLocalListVersion } from './calls/get-local-list-version.js';
import { readVariables, variableValue } from './calls/get-variables.js';
import { sendLocalList } from './calls/send-local-list.js';
import { setVariable } from './calls/set-variables.js';

const NAMES = {
  listEnabled: 'LocalAuthListCtrlr.Enabled',
  cache: 'AuthCacheCtrlr.Enabled',
  offline: 'AuthCtrlr.LocalAuthorizeOffline',
  unknownOffline: 'AuthCtrlr.OfflineTxForUnknownIdEnabled',
};
const ITEMS = 'LocalAuthListCtrlr.ItemsPerMessage';
const BYTES = 'LocalAuthListCtrlr.BytesPerMessage';
/** 2.0.1 IdTokenType.idToken is identifierString(36). */
const ID_TOKEN_LENGTH = 36;

/**
 * A 2.0.1 station's local list (LocalAuthListCtrlr) and cache (AuthCacheCtrlr): it has a list when
 * it knows LocalAuthListCtrlr.Enabled; AuthCacheCtrlr.Enabled false turns its cache off where it
 * takes it, a station that refuses it is taken to cache, one without the component has none. The
 * list's capacity is the maxLimit of LocalAuthListCtrlr.Entries, which only a device-model report
 * tells: the gateway's own bound (localLists.maxEntries) holds instead. `maxTokenLength`: the
 * version's IdTokenType.idToken length (a later version's own).
 */
export function localAuthorization201(
  target: CallTarget,
  maxTokenLength = ID_TOKEN_LENGTH,
): LocalAuthCalls {
  return {
    async prepare(settings: LocalAuthSettings): Promise<LocalAuthCapability> {
      const held = await readVariables(target, [ITEMS, BYTES, ...Object.values(NAMES)]);
      const value = (key: string) => variableValue(held, key);
      const listSupported = value(NAMES.listEnabled) !== null;
      const applied = await applyLocalAuthSettings(
        NAMES,
        { value, change: (key, wanted) => setVariable(target, key, wanted) },
        settings,
        listSupported,
        // AuthCacheCtrlr is optional in 2.0.1: a station without it has no cache.
        held.unknownKeys.includes(NAMES.cache),
      );
      return {
        listSupported,
        maxEntries: null,
        itemsPerMessage: positiveSetting(value(ITEMS)),
        bytesPerMessage: positiveSetting(value(BYTES)),
        maxTokenLength,
        ...applied,
      };
    },
    listVersion: () => getLocalListVersion(target),
    sendList: (update) => sendLocalList(target, update),
    clearCache: async () => stepOf(await clearCache(target)),
  };
}
