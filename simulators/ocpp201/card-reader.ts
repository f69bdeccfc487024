import type { TapOutcome, TappedEvent } from '../shared/events.js';
import { macHex } from '../shared/metered-outlet.js';
import type { TapOptions } from '../shared/simulated-charge-point.js';
import { CsmsRequests } from './csms-requests.js';
import type { Authorization, Evse } from './evse.js';
import type { IdToken } from './ocpp-types.js';

type Decision = { status?: string; outcome: TapOutcome };

/** idToken compares case-insensitively (2.0.1 IdTokenType). */
function sameToken(a: IdToken, b: IdToken): boolean {
  return a.type === b.type && a.idToken.toUpperCase() === b.idToken.toUpperCase();
}

/**
 * The station's RFID reader and AutoCharge (2.0.1): a token presented at an EVSE is authorized
 * (Authorize, unless the firmware skips it), then goes where TxCtrlr.TxStartPoint puts it: the
 * Started event (Authorized, PowerPathClosed: at once or when the EV is plugged in) or an Updated
 * event of the transaction already started at EVConnected, triggerReason Authorized either way.
 * The token that authorized a transaction ends its authorization (StopAuthorized, reason Local).
 * A TransactionEvent answered other than Accepted deauthorizes it (transaction-lifecycle.ts).
 */
export abstract class CardReader201 extends CsmsRequests {
  async tap(connectorId: number, uid: string, options: TapOptions = {}): Promise<TappedEvent> {
    const evse = this.evse(connectorId);
    const idToken: IdToken = { idToken: this.wire.readerId(uid), type: options.type ?? 'ISO14443' };
    return this.present(evse, idToken, 'card');
  }

  /** AutoCharge: the EV's MAC (EVCCID) as a MacAddress idToken. */
  protected identifyVehicle(evse: Evse, macAddress: string): Promise<TappedEvent> {
    const idToken: IdToken = {
      idToken: this.wire.readerId(macHex(macAddress)),
      type: 'MacAddress',
    };
    return this.present(evse, idToken, 'vehicle');
  }

  private async present(
    evse: Evse,
    idToken: IdToken,
    source: TappedEvent['source'],
  ): Promise<TappedEvent> {
    const decision = await this.decide(evse, idToken);
    const event: TappedEvent = {
      connectorId: evse.id,
      idTag: idToken.idToken,
      source,
      ...decision,
    };
    this.emit('tapped', event);
    return event;
  }

  private async decide(evse: Evse, idToken: IdToken): Promise<Decision> {
    const authorized = evse.transaction?.authorization;
    if (authorized) {
      if (!sameToken(authorized.idToken, idToken)) return { outcome: 'ignored' };
      await this.deauthorize(evse, 'Local', 'StopAuthorized');
      return { outcome: 'stopped' };
    }
    if (!this.readyForTap(evse)) return { outcome: 'ignored' };
    let status: string | undefined;
    if (!this.settings.personality.has('skips-authorize')) {
      if (!this.link.isOpen) {
        // Offline: only what the station holds itself can authorize.
        status = this.offlineAuthorization(idToken);
      } else {
        evse.authorizing = true;
        try {
          status = (await this.call('Authorize', { idToken })).idTokenInfo.status;
        } catch (error) {
          this.warn(`Authorize on EVSE ${evse.id} failed`, error);
          return { outcome: 'failed' };
        } finally {
          evse.authorizing = false;
        }
      }
      if (status !== 'Accepted') return { status, outcome: 'refused' };
      if (!this.readyForTap(evse)) return { status, outcome: 'ignored' };
    }
    const authorization: Authorization = { idToken };
    evse.pendingAuthorization = authorization;
    await this.useAuthorization(evse, authorization);
    const started = evse.transaction?.authorization === authorization;
    const outcome = started ? 'started' : evse.pendingAuthorization ? 'waiting' : 'ignored';
    return status === undefined ? { outcome } : { status, outcome };
  }

  /**
   * The status a token has while the link is down: its local list's (Accepted only while
   * LocalAuthorizeOffline and the list are enabled); anything not Accepted is refused: Unknown
   * when the list does not hold it (no cache, no OfflineTxForUnknownIdEnabled here).
   */
  protected offlineAuthorization(idToken: IdToken): string {
    const verdict = this.localAuthorization.offlineVerdict(idToken.idToken, Date.now());
    if (verdict === undefined) return 'Unknown';
    return verdict === 'NotAllowed' ? 'Invalid' : verdict;
  }

  private readyForTap(evse: Evse): boolean {
    return this.canRemoteStart(evse);
  }
}
