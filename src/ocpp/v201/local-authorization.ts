import type { LocalAuthCapability, LocalAuthSettings } from '../port.js';
import type { LocalAuthCalls } from '../protocol-adapter.js';
import type { CallTarget } from '../calls/operator-call.js';
import { ensureSetting, positiveSetting } from '../calls/local-auth-settings.js';
import { stepOf } from '../calls/step-outcome.js';
import { clearCache } from './calls/clear-cache.js';
import { getLocalListVersion } from './calls/get-local-list-version.js';
import { readVariables, variableValue } from './calls/get-variables.js';
import { sendLocalList } from './calls/send-local-list.js';
import { resultStatus, sendSetVariables } from './calls/set-variables.js';

const LIST_ENABLED = 'LocalAuthListCtrlr.Enabled';
const ITEMS = 'LocalAuthListCtrlr.ItemsPerMessage';
const BYTES = 'LocalAuthListCtrlr.BytesPerMessage';
const CACHE = 'AuthCacheCtrlr.Enabled';
const OFFLINE = 'AuthCtrlr.LocalAuthorizeOffline';
const UNKNOWN_OFFLINE = 'AuthCtrlr.OfflineTxForUnknownIdEnabled';
/** 2.0.1 IdTokenType.idToken is identifierString(36). */
const ID_TOKEN_LENGTH = 36;

/**
 * A 2.0.1 station's local list (LocalAuthListCtrlr) and cache (AuthCacheCtrlr): it has a list when
 * it knows LocalAuthListCtrlr.Enabled; AuthCacheCtrlr.Enabled false turns its cache off where it
 * takes it, a station that refuses it is taken to cache, one without the component has none. The list's capacity is the maxLimit of
 * LocalAuthListCtrlr.Entries, which only a device model report tells: the gateway's own bound
 * (localLists.maxEntries) holds instead. LocalAuthorizeOffline is true only where the operator
 * allows offline starts and the list is the station's only offline authority.
 */
export function localAuthorization201(target: CallTarget): LocalAuthCalls {
  return {
    async prepare(settings: LocalAuthSettings): Promise<LocalAuthCapability> {
      const held = await readVariables(target, [
        LIST_ENABLED,
        ITEMS,
        BYTES,
        CACHE,
        OFFLINE,
        UNKNOWN_OFFLINE,
      ]);
      const value = (key: string) => variableValue(held, key);
      const listSupported = value(LIST_ENABLED) !== null;
      const set = (key: string, wanted: string) => async () => {
        const [component, variable] = key.split('.') as [string, string];
        const reply = await sendSetVariables(target, [[component, variable, wanted]]);
        return { status: resultStatus(reply, key), raw: reply.raw };
      };
      const refused: string[] = [];
      const ensure = async (key: string, wanted: string) => {
        if (!(await ensureSetting(value(key), wanted, set(key, wanted)))) refused.push(key);
      };
      if (listSupported) await ensure(LIST_ENABLED, String(settings.listEnabled));
      // A station without the AuthCacheCtrlr component has no cache (it is optional in 2.0.1).
      const noCache = held.unknownKeys.includes(CACHE);
      const cacheOff = noCache || (await ensureSetting(value(CACHE), 'false', set(CACHE, 'false')));
      if (!cacheOff && value(CACHE) !== null) refused.push(CACHE);
      const offline = settings.offlineStarts && listSupported && settings.listEnabled && cacheOff;
      await ensure(OFFLINE, String(offline));
      if (value(UNKNOWN_OFFLINE) !== null) await ensure(UNKNOWN_OFFLINE, 'false');
      return {
        listSupported,
        maxEntries: null,
        itemsPerMessage: positiveSetting(value(ITEMS)),
        bytesPerMessage: positiveSetting(value(BYTES)),
        maxTokenLength: ID_TOKEN_LENGTH,
        cache: cacheOff ? 'disabled' : 'enabled',
        refused,
      };
    },
    listVersion: () => getLocalListVersion(target),
    sendList: (update) => sendLocalList(target, update),
    clearCache: async () => stepOf(await clearCache(target)),
  };
}
