import type { TapOutcome, TappedEvent } from '../shared/events.js';
import { macHex } from '../shared/metered-outlet.js';
import { CentralSystemRequests } from './central-system-requests.js';
import type { Connector } from './connector.js';

type Decision = { status?: string; outcome: TapOutcome };

/** CiString20: one idTag in any case is the same idTag. */
function sameIdTag(a: string, b: string): boolean {
  return a.toUpperCase() === b.toUpperCase();
}

/**
 * The charge point's RFID reader and AutoCharge (1.6): a token presented at a connector is
 * authorized (Authorize, unless the firmware skips it), then starts the transaction with that
 * idTag (StartTransaction), at once or when the vehicle is plugged in; the token that started a
 * transaction ends it (StopTransaction reason Local). A StartTransaction answered other than
 * Accepted is ended as StopTransactionOnInvalidId says (transactions.ts).
 */
export abstract class CardReader16 extends CentralSystemRequests {
  async tap(connectorId: number, uid: string): Promise<TappedEvent> {
    const connector = this.connector(connectorId);
    return this.present(connector, this.wire.readerId(uid), 'card');
  }

  /** AutoCharge: the EV's MAC (EVCCID) as the idTag, `VID:` and its hex, as DC chargers send it. */
  protected identifyVehicle(connector: Connector, macAddress: string): Promise<TappedEvent> {
    return this.present(connector, `VID:${this.wire.readerId(macHex(macAddress))}`, 'vehicle');
  }

  private async present(
    connector: Connector,
    idTag: string,
    source: TappedEvent['source'],
  ): Promise<TappedEvent> {
    const decision = await this.decide(connector, idTag);
    const event: TappedEvent = { connectorId: connector.id, idTag, source, ...decision };
    this.emit('tapped', event);
    return event;
  }

  private async decide(connector: Connector, idTag: string): Promise<Decision> {
    const running = connector.transaction;
    if (running) {
      // The idTag that started the transaction may end it without asking (1.6 §3.5.1).
      if (!sameIdTag(running.idTag, idTag)) return { outcome: 'ignored' };
      await this.stopTransaction(connector, 'Local');
      return { outcome: 'stopped' };
    }
    if (!this.readyForTap(connector)) return { outcome: 'ignored' };
    let status: string | undefined;
    const offline = !this.link.isOpen;
    if (!this.settings.personality.has('skips-authorize')) {
      if (offline) {
        // Offline: only what the charger holds itself can authorize.
        status = this.offlineAuthorization(idTag);
      } else {
        try {
          status = (await this.call('Authorize', { idTag })).idTagInfo.status;
        } catch (error) {
          this.warn(`Authorize on connector ${connector.id} failed`, error);
          return { outcome: 'failed' };
        }
      }
      if (status !== 'Accepted') return { status, outcome: 'refused' };
      // The driver may have done something else while the answer was on its way.
      if (!this.readyForTap(connector)) return { status, outcome: 'ignored' };
    }
    const answered = status === undefined ? {} : { status };
    if (!connector.vehicle) {
      connector.pendingRemoteStart = { idTag, byTap: true };
      await this.changeStatus(connector, 'Preparing');
      this.timers.after(`connectionTimeout:${connector.id}`, this.connectionTimeoutSeconds, () =>
        this.onConnectionTimeout(connector),
      );
      return { ...answered, outcome: 'waiting' };
    }
    if (offline) {
      // Begun at once under a provisional id; its StartTransaction waits for the link, the
      // driver does not.
      this.startTransaction(connector, idTag, false).catch((error: unknown) =>
        this.warn('offline start failed', error),
      );
    } else {
      await this.startTransaction(connector, idTag, false);
    }
    return { ...answered, outcome: 'started' };
  }

  /**
   * The status an idTag has while the link is down: its local list's (Accepted only while
   * LocalAuthorizeOffline and the list are enabled); anything not Accepted is refused, as is an
   * idTag the list does not hold (no cache, no AllowOfflineTxForUnknownId here).
   */
  protected offlineAuthorization(idTag: string): string {
    const verdict = this.localAuthorization.offlineVerdict(idTag, Date.now());
    return verdict === undefined || verdict === 'NotAllowed' ? 'Invalid' : verdict;
  }

  private readyForTap(connector: Connector): boolean {
    const free = connector.status === 'Available' || connector.status === 'Preparing';
    return (
      free &&
      connector.availability === 'Operative' &&
      !connector.transaction &&
      !connector.starting &&
      !connector.pendingRemoteStart
    );
  }
}
