import { LocalAuthList, type LocalVerdict } from '../shared/local-list.js';
import { LOCAL_LIST_MAX_ENTRIES, type DeviceModel } from './device-model.js';
import type { IncomingCalls } from './ocpp-messages.js';

type Calls = Pick<IncomingCalls, 'SendLocalList' | 'GetLocalListVersion'>;

/** A 2.0.1 station's local list (LocalAuthListCtrlr) and what it answers about it. */
export class LocalAuthorization201 {
  readonly list = new LocalAuthList(LOCAL_LIST_MAX_ENTRIES);

  constructor(private readonly deviceModel: DeviceModel) {}

  async sendLocalList(req: Calls['SendLocalList']['req']): Promise<Calls['SendLocalList']['conf']> {
    const entries = (req.localAuthorizationList ?? []).map(({ idToken, idTokenInfo }) => ({
      token: idToken.idToken,
      type: idToken.type,
      ...(idTokenInfo === undefined ? {} : { status: idTokenInfo.status }),
      ...(idTokenInfo?.cacheExpiryDateTime === undefined
        ? {}
        : { expiresAt: idTokenInfo.cacheExpiryDateTime }),
    }));
    return { status: this.list.apply(req.updateType, req.versionNumber, entries) };
  }

  async getLocalListVersion(): Promise<Calls['GetLocalListVersion']['conf']> {
    return { versionNumber: this.list.version };
  }

  /** Whether a token may start while the link is down (as in 1.6: the list alone decides). */
  offlineVerdict(token: string, nowMs: number): LocalVerdict | 'NotAllowed' | undefined {
    if (
      !this.deviceModel.getBoolean('AuthCtrlr', 'LocalAuthorizeOffline') ||
      !this.deviceModel.getBoolean('LocalAuthListCtrlr', 'Enabled')
    )
      return 'NotAllowed';
    return this.list.verdict(token, nowMs);
  }
}
