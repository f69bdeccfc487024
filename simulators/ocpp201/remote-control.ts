import { NO_REPLY } from '../shared/rpc-client.js';
import { showAnswer } from './cost-screen.js';
import { authorizedBy } from './evse.js';
import type { Authorization, Evse } from './evse.js';
import type { IncomingCalls } from './ocpp-messages.js';
import { TransactionMetering } from './transaction-metering.js';

export type Conf<M extends keyof IncomingCalls> = Promise<
  IncomingCalls[M]['conf'] | typeof NO_REPLY
>;

/**
 * RequestStartTransaction and RequestStopTransaction: which EVSE a remote start claims, the
 * optional Authorize, waiting up to EVConnectionTimeOut for the vehicle, and remote stops.
 */
export abstract class RemoteControl extends TransactionMetering {
  protected canRemoteStart(evse: Evse): boolean {
    return (
      (evse.connectorStatus === 'Available' || evse.connectorStatus === 'Occupied') &&
      evse.availability === 'Operative' &&
      this.stationAvailability === 'Operative' &&
      !evse.pendingAuthorization &&
      !evse.authorizing &&
      // A transaction started at EVConnected still waits for its idToken.
      evse.transaction?.authorization === undefined &&
      evse.transaction?.endOnUnplug === undefined
    );
  }

  private remoteStartTarget(evseId: number | undefined): Evse | undefined {
    const candidates =
      evseId === undefined ? this.evses : this.evses.filter((evse) => evse.id === evseId);
    const free = candidates.filter((evse) => this.canRemoteStart(evse));
    // Without an evseId, the driver is presumably at the EVSE that has a car plugged in.
    return free.find((evse) => evse.vehicle !== undefined) ?? free[0];
  }

  protected async onRequestStart({
    evseId,
    remoteStartId,
    idToken,
  }: IncomingCalls['RequestStartTransaction']['req']): Conf<'RequestStartTransaction'> {
    const idTag = idToken.idToken;
    if (this.settings.remoteStart === 'ignore') {
      this.emit('remoteStart', { connectorId: evseId, idTag, status: 'Ignored' });
      return NO_REPLY;
    }
    const target =
      this.settings.remoteStart === 'accept' ? this.remoteStartTarget(evseId) : undefined;
    const status = target ? 'Accepted' : 'Rejected';
    if (target) {
      const authorization: Authorization = { idToken, remoteStartId };
      // Reserved synchronously so a second request cannot claim the same EVSE.
      if (this.deviceModel.getBoolean('AuthCtrlr', 'AuthorizeRemoteStart')) {
        target.authorizing = true;
        this.defer(() => this.authorizeRemoteStart(target, authorization));
      } else {
        target.pendingAuthorization = authorization;
        this.defer(() => this.useAuthorization(target, authorization));
      }
    }
    this.emit('remoteStart', { connectorId: target?.id ?? evseId, idTag, status });
    const transactionId = target?.transaction?.id;
    return transactionId === undefined ? { status } : { status, transactionId };
  }

  private async authorizeRemoteStart(evse: Evse, authorization: Authorization): Promise<void> {
    let accepted = false;
    try {
      const conf = await this.call('Authorize', { idToken: authorization.idToken });
      const screen = this.settings.personality.has('cost-screen');
      showAnswer(screen, conf, undefined, (event) => this.emit('screen', event));
      accepted = conf.idTokenInfo.status === 'Accepted';
      if (!accepted) {
        this.warn(
          `idToken ${authorization.idToken.idToken} not authorized (${conf.idTokenInfo.status})`,
        );
      }
    } catch (error) {
      this.warn(`Authorize for EVSE ${evse.id} failed`, error);
    } finally {
      evse.authorizing = false;
    }
    if (!accepted) return;
    evse.pendingAuthorization = authorization;
    await this.useAuthorization(evse, authorization);
  }

  /** Starts (or authorizes) the transaction now, or waits for the vehicle. */
  protected async useAuthorization(evse: Evse, authorization: Authorization): Promise<void> {
    // plugIn() may already have consumed it.
    if (evse.pendingAuthorization !== authorization) return;
    if (evse.transaction) {
      evse.pendingAuthorization = undefined;
      await this.authorizeTransaction(evse, authorization);
      return;
    }
    if (evse.vehicle || this.txStartPoint === 'Authorized') {
      evse.pendingAuthorization = undefined;
      await this.startTransaction(evse, authorizedBy(authorization), authorization);
    }
    if (!evse.vehicle) {
      this.timers.after(`evConnectionTimeout:${evse.id}`, this.connectionTimeoutSeconds, () =>
        this.onConnectionTimeout(evse),
      );
    }
  }

  private async onConnectionTimeout(evse: Evse): Promise<void> {
    if (evse.vehicle) return;
    if (evse.transaction) {
      // TxStartPoint Authorized: the transaction exists and ends without ever charging.
      await this.endTransaction(evse, 'Timeout', 'EVConnectTimeout');
      return;
    }
    if (!evse.pendingAuthorization) return;
    evse.pendingAuthorization = undefined;
    this.warn(`EVSE ${evse.id}: no vehicle within EVConnectionTimeOut; the start lapsed`);
  }

  protected async onRequestStop({
    transactionId,
  }: IncomingCalls['RequestStopTransaction']['req']): Conf<'RequestStopTransaction'> {
    const evse = this.evses.find((candidate) => candidate.transaction?.id === transactionId);
    const personality = this.settings.personality;
    const status = evse && !personality.has('rejects-stop') ? 'Accepted' : 'Rejected';
    // Firmware that acknowledges the stop and keeps charging, as seen in the field.
    if (evse && status === 'Accepted' && !personality.has('ignores-stop')) {
      this.defer(async () => {
        if (evse.transaction?.id === transactionId) {
          await this.deauthorize(evse, 'Remote', 'RemoteStop');
        }
      });
    }
    this.emit('remoteStop', { transactionId, status });
    return { status };
  }
}
