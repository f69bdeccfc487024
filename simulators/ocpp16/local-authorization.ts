import { LocalAuthList, type LocalVerdict } from '../shared/local-list.js';
import type { ConfigurationStore } from './configuration.js';
import { LOCAL_LIST_MAX_LENGTH } from './configuration.js';
import type { IncomingCalls } from './ocpp-types.js';

type Calls = Pick<IncomingCalls, 'SendLocalList' | 'GetLocalListVersion'>;

/** A 1.6 charge point's local list and what it answers about it. */
export class LocalAuthorization16 {
  readonly list = new LocalAuthList(LOCAL_LIST_MAX_LENGTH);

  constructor(private readonly configuration: ConfigurationStore) {}

  async sendLocalList(req: Calls['SendLocalList']['req']): Promise<Calls['SendLocalList']['conf']> {
    const entries = (req.localAuthorizationList ?? []).map(({ idTag, idTagInfo }) => ({
      token: idTag,
      ...(idTagInfo === undefined ? {} : { status: idTagInfo.status }),
      ...(idTagInfo?.expiryDate === undefined ? {} : { expiresAt: idTagInfo.expiryDate }),
    }));
    return { status: this.list.apply(req.updateType, req.listVersion, entries) };
  }

  async getLocalListVersion(): Promise<Calls['GetLocalListVersion']['conf']> {
    return { listVersion: this.list.version };
  }

  /**
   * Whether an idTag may start while the link is down: LocalAuthorizeOffline and the list
   * enabled, and the list says Accepted (no cache, no unknown ids here). The verdict otherwise.
   */
  offlineVerdict(idTag: string, nowMs: number): LocalVerdict | 'NotAllowed' | undefined {
    if (
      !this.configuration.getBoolean('LocalAuthorizeOffline') ||
      !this.configuration.getBoolean('LocalAuthListEnabled')
    )
      return 'NotAllowed';
    return this.list.verdict(idTag, nowMs);
  }
}
