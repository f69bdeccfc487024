import { randomUUID } from 'node:crypto';
import type { OCPP21 } from 'typed-ocpp';
import { DeviceModel } from './device-model.js';
import { Link21, type Answer, type Payload, type Violation } from './link.js';

export type TransactionLimit = NonNullable<OCPP21.TransactionEventResponse['transactionLimit']>;
type IdToken = OCPP21.AuthorizeRequest['idToken'];
type TxEventRequest = OCPP21.TransactionEventRequest;
type TxEventResponse = OCPP21.TransactionEventResponse;
type ConnectorStatus = OCPP21.StatusNotificationRequest['connectorStatus'];

/** A transaction as the station runs it. */
export interface PeerTx {
  transactionId: string;
  evseId: number;
  idToken: IdToken;
  /** The register when the transaction started: `maxEnergy` counts from here. */
  startWh: number;
  seqNo: number;
  /** The limit the station holds (the last the gateway sent), enforced on `maxEnergy`. */
  limit: TransactionLimit | null;
  ended: { triggerReason: string; stoppedReason: string } | null;
}

export interface StationOptions {
  url: string;
  identity: string;
  password: string;
  evses: number;
  /** Each EVSE's register at power-up, Wh. */
  registerWh?: number;
}

/**
 * A strict OCPP 2.1 charging station for tests, its frames checked by typed-ocpp (`link.ts`):
 * boots, reports status, keeps a device model, runs transactions started remotely or by a card,
 * and answers the operator's reset, trigger and availability. It is a spec-following station for
 * the paid limit: it keeps every `transactionLimit` a TransactionEventResponse carries, confirms it
 * with a `LimitSet` event and never lets a transaction draw past `maxEnergy` (it ends it with
 * `EnergyLimitReached`). The test is its clock: energy flows only when the test calls `charge`.
 */
export class Station21 {
  readonly violations: Violation[] = [];
  /** Every call the gateway made, valid or not, in order. */
  readonly calls: { action: string; params: Payload }[] = [];
  /** Every transactionLimit the gateway sent, with the transaction it was for. */
  readonly limits: { transactionId: string; limit: TransactionLimit }[] = [];
  readonly transactions: PeerTx[] = [];
  /** Every StatusNotification the station sent, in order. */
  readonly statuses: { evseId: number; status: ConnectorStatus }[] = [];
  readonly model = new DeviceModel();
  private readonly registers = new Map<number, number>();
  private readonly inoperative = new Set<number>();
  private resetWhenIdle = false;
  private link: Link21 | null = null;

  constructor(private readonly o: StationOptions) {
    for (let evse = 1; evse <= o.evses; evse++) this.registers.set(evse, o.registerWh ?? 100_000);
  }

  async connect(): Promise<void> {
    this.link = await Link21.open(
      this.o.url,
      this.o.identity,
      this.o.password,
      (action, params) => {
        this.calls.push({ action, params });
        return this.serve(action, params);
      },
      this.violations,
    );
  }

  /** BootNotification, then every connector's status. */
  async boot(reason: OCPP21.BootNotificationRequest['reason'] = 'PowerUp'): Promise<string> {
    const reply = await this.call('BootNotification', {
      reason,
      chargingStation: { vendorName: 'FleetTest', model: 'Strict21', firmwareVersion: '2.1.0' },
    } satisfies OCPP21.BootNotificationRequest);
    for (const evse of this.registers.keys()) await this.status(evse);
    return String(reply.status);
  }

  async status(evseId: number, connectorStatus: ConnectorStatus = this.statusOf(evseId)) {
    this.statuses.push({ evseId, status: connectorStatus });
    await this.call('StatusNotification', {
      timestamp: now(),
      connectorStatus,
      evseId,
      connectorId: 1,
    } satisfies OCPP21.StatusNotificationRequest);
  }

  register(evseId: number): number {
    return this.registers.get(evseId) ?? 0;
  }

  active(evseId: number): PeerTx | undefined {
    return this.transactions.find((tx) => tx.evseId === evseId && tx.ended === null);
  }

  /**
   * The EV draws `wh` on the transaction's EVSE and the station reports it in an `Updated` event.
   * A `maxEnergy` the station holds caps the draw; reaching it ends the transaction there.
   */
  async charge(tx: PeerTx, wh: number): Promise<'charging' | 'limit reached' | 'ended'> {
    if (tx.ended) return 'ended';
    const cap = tx.limit?.maxEnergy;
    const drawn = this.register(tx.evseId) - tx.startWh;
    const step = cap === undefined ? wh : Math.max(0, Math.min(wh, cap - drawn));
    this.registers.set(tx.evseId, this.register(tx.evseId) + step);
    if (cap !== undefined && drawn + step >= cap) {
      await this.end(tx, 'EnergyLimitReached', 'EnergyLimitReached');
      return 'limit reached';
    }
    await this.event(tx, 'Updated', 'MeterValuePeriodic', {
      meterValue: this.meterValue(tx.evseId, 'Sample.Periodic'),
    });
    return 'charging';
  }

  /** A card at the reader: Authorize, and when accepted a transaction started by it. */
  async tap(evseId: number, idToken: IdToken): Promise<{ status: string; tx?: PeerTx }> {
    const reply = await this.call('Authorize', { idToken } satisfies OCPP21.AuthorizeRequest);
    const status = (reply.idTokenInfo as { status: string }).status;
    if (status !== 'Accepted') return { status };
    const tx = await this.start(evseId, idToken, 'Authorized');
    return { status, tx };
  }

  /** The driver ends the transaction at the station (the same card again). */
  async stopLocally(tx: PeerTx): Promise<void> {
    await this.end(tx, 'StopAuthorized', 'Local');
  }

  async close(): Promise<void> {
    await this.link?.close();
  }

  private call(action: string, params: object): Promise<Payload> {
    if (!this.link?.open) throw new Error(`${this.o.identity} is not connected`);
    return this.link.call(action, params);
  }

  /** `params` passed typed-ocpp's check of the action's 2.1 schema (link.ts). */
  private serve(action: string, params: object): Answer | undefined {
    switch (action) {
      case 'GetVariables':
        return { reply: this.model.get(params as OCPP21.GetVariablesRequest) };
      case 'SetVariables':
        return { reply: this.model.set(params as OCPP21.SetVariablesRequest) };
      case 'RequestStartTransaction':
        return this.requestStart(params as OCPP21.RequestStartTransactionRequest);
      case 'RequestStopTransaction':
        return this.requestStop(params as OCPP21.RequestStopTransactionRequest);
      case 'GetTransactionStatus': {
        const id = (params as OCPP21.GetTransactionStatusRequest).transactionId;
        const tx = this.transactions.find((t) => t.transactionId === id);
        return {
          reply: { messagesInQueue: false, ...(tx && { ongoingIndicator: tx.ended === null }) },
        };
      }
      case 'Reset':
        return this.reset(params as OCPP21.ResetRequest);
      case 'TriggerMessage':
        return this.trigger(params as OCPP21.TriggerMessageRequest);
      case 'ChangeAvailability':
        return this.changeAvailability(params as OCPP21.ChangeAvailabilityRequest);
      case 'SetChargingProfile':
      case 'ClearChargingProfile':
      case 'ClearCache':
      case 'SendLocalList':
        return { reply: { status: 'Accepted' } };
      case 'GetLocalListVersion':
        return { reply: { versionNumber: 0 } };
      case 'UnlockConnector':
        return { reply: { status: 'Unlocked' } };
      default:
        return undefined;
    }
  }

  private requestStart(req: OCPP21.RequestStartTransactionRequest): Answer {
    const evseId = req.evseId ?? [...this.registers.keys()].find((e) => !this.active(e));
    if (evseId === undefined || this.active(evseId) || this.inoperative.has(evseId)) {
      return { reply: { status: 'Rejected' } };
    }
    return {
      reply: { status: 'Accepted' },
      then: async () => {
        await this.start(evseId, req.idToken, 'RemoteStart', req.remoteStartId);
      },
    };
  }

  private requestStop(req: OCPP21.RequestStopTransactionRequest): Answer {
    const tx = this.transactions.find((t) => t.transactionId === req.transactionId && !t.ended);
    if (!tx) return { reply: { status: 'Rejected' } };
    return { reply: { status: 'Accepted' }, then: () => this.end(tx, 'RemoteStop', 'Remote') };
  }

  private reset(req: OCPP21.ResetRequest): Answer {
    const running = this.transactions.filter((t) => t.ended === null);
    if (req.evseId !== undefined) return { reply: { status: 'Rejected' } };
    if (req.type === 'OnIdle' && running.length > 0) {
      this.resetWhenIdle = true;
      return { reply: { status: 'Scheduled' } };
    }
    return {
      reply: { status: 'Accepted' },
      then: async () => {
        for (const tx of running) await this.end(tx, 'ResetCommand', 'ImmediateReset');
        await this.reboot();
      },
    };
  }

  private trigger(req: OCPP21.TriggerMessageRequest): Answer {
    const evseId = req.evse?.id;
    if (evseId !== undefined && !this.registers.has(evseId))
      return { reply: { status: 'Rejected' } };
    const evses = evseId === undefined ? [...this.registers.keys()] : [evseId];
    switch (req.requestedMessage) {
      case 'StatusNotification':
        return this.accepted(async () => {
          for (const evse of evses) await this.status(evse);
        });
      case 'MeterValues':
        return this.accepted(async () => {
          for (const evse of evses) {
            await this.call('MeterValues', {
              evseId: evse,
              meterValue: this.meterValue(evse, 'Trigger'),
            } satisfies OCPP21.MeterValuesRequest);
          }
        });
      case 'TransactionEvent': {
        const txs = evses.flatMap((evse) => this.active(evse) ?? []);
        if (txs.length === 0) return { reply: { status: 'Rejected' } };
        return this.accepted(async () => {
          for (const tx of txs) {
            await this.event(tx, 'Updated', 'Trigger', {
              meterValue: this.meterValue(tx.evseId, 'Trigger'),
            });
          }
        });
      }
      case 'Heartbeat':
        return this.accepted(async () => {
          await this.call('Heartbeat', {});
        });
      default:
        return { reply: { status: 'NotImplemented' } };
    }
  }

  private changeAvailability(req: OCPP21.ChangeAvailabilityRequest): Answer {
    const evses = req.evse === undefined ? [...this.registers.keys()] : [req.evse.id];
    if (evses.some((evse) => !this.registers.has(evse))) return { reply: { status: 'Rejected' } };
    const busy = evses.some((evse) => this.active(evse));
    for (const evse of evses) {
      if (req.operationalStatus === 'Inoperative') this.inoperative.add(evse);
      else this.inoperative.delete(evse);
    }
    // An EVSE with a transaction changes once it ends (its status then says so).
    if (busy && req.operationalStatus === 'Inoperative') return { reply: { status: 'Scheduled' } };
    return this.accepted(async () => {
      for (const evse of evses) await this.status(evse);
    });
  }

  private accepted(then: () => Promise<void>): Answer {
    return { reply: { status: 'Accepted' }, then };
  }

  private async start(
    evseId: number,
    idToken: IdToken,
    triggerReason: 'Authorized' | 'RemoteStart',
    remoteStartId?: number,
  ): Promise<PeerTx> {
    const tx: PeerTx = {
      transactionId: randomUUID(),
      evseId,
      idToken,
      startWh: this.register(evseId),
      seqNo: 0,
      limit: null,
      ended: null,
    };
    this.transactions.push(tx);
    await this.status(evseId, 'Occupied');
    await this.event(tx, 'Started', triggerReason, {
      idToken,
      evse: { id: evseId, connectorId: 1 },
      meterValue: this.meterValue(evseId, 'Transaction.Begin'),
      ...(remoteStartId !== undefined && { remoteStartId }),
    });
    return tx;
  }

  private async end(tx: PeerTx, triggerReason: string, stoppedReason: string): Promise<void> {
    if (tx.ended) return;
    tx.ended = { triggerReason, stoppedReason };
    await this.event(tx, 'Ended', triggerReason, {
      stoppedReason,
      meterValue: this.meterValue(tx.evseId, 'Transaction.End'),
    });
    await this.status(tx.evseId);
    if (this.resetWhenIdle && this.transactions.every((t) => t.ended)) {
      this.resetWhenIdle = false;
      await this.reboot();
    }
  }

  /**
   * One TransactionEvent. `extra` holds the event's own fields, `remoteStartId`, `stoppedReason`
   * and `transactionLimit` going into its transactionInfo. The answer's limit is taken, confirmed
   * with `LimitSet`, and enforced at once if the transaction already drew it.
   */
  private async event(
    tx: PeerTx,
    eventType: TxEventRequest['eventType'],
    triggerReason: string,
    extra: Partial<TxEventRequest> & {
      remoteStartId?: number;
      stoppedReason?: string;
      transactionLimit?: TransactionLimit;
    } = {},
  ): Promise<void> {
    const { remoteStartId, stoppedReason, transactionLimit, ...fields } = extra;
    const request = {
      eventType,
      timestamp: now(),
      triggerReason: triggerReason as TxEventRequest['triggerReason'],
      seqNo: tx.seqNo++,
      transactionInfo: {
        transactionId: tx.transactionId,
        chargingState: eventType === 'Ended' ? 'EVConnected' : 'Charging',
        ...(remoteStartId !== undefined && { remoteStartId }),
        ...(stoppedReason !== undefined && {
          stoppedReason: stoppedReason as NonNullable<
            TxEventRequest['transactionInfo']['stoppedReason']
          >,
        }),
        ...(transactionLimit && { transactionLimit }),
      },
      ...fields,
    } satisfies TxEventRequest;
    const reply = (await this.call('TransactionEvent', request)) as TxEventResponse;
    const status = reply.idTokenInfo?.status;
    if (eventType !== 'Ended' && status !== undefined && status !== 'Accepted') {
      if (this.model.value('TxCtrlr.StopTxOnInvalidId') === 'true') {
        await this.end(tx, 'Deauthorized', 'DeAuthorized');
      }
      return;
    }
    if (reply.transactionLimit === undefined || eventType === 'Ended') return;
    this.limits.push({ transactionId: tx.transactionId, limit: reply.transactionLimit });
    if (sameLimit(tx.limit, reply.transactionLimit)) return;
    tx.limit = reply.transactionLimit;
    const cap = tx.limit.maxEnergy;
    if (cap !== undefined && this.register(tx.evseId) - tx.startWh >= cap) {
      await this.end(tx, 'EnergyLimitReached', 'EnergyLimitReached');
      return;
    }
    await this.event(tx, 'Updated', 'LimitSet', { transactionLimit: tx.limit });
  }

  private meterValue(evseId: number, context: string): OCPP21.MeterValuesRequest['meterValue'] {
    return [
      {
        timestamp: now(),
        sampledValue: [
          {
            value: this.register(evseId),
            context: context as OCPP21.SampledValueType['context'],
            measurand: 'Energy.Active.Import.Register',
            unitOfMeasure: { unit: 'Wh' },
          },
        ],
      },
    ];
  }

  private statusOf(evseId: number): ConnectorStatus {
    if (this.active(evseId)) return 'Occupied';
    return this.inoperative.has(evseId) ? 'Unavailable' : 'Available';
  }

  /** A reboot: the connection dropped and opened again, and a new BootNotification. */
  private async reboot(): Promise<void> {
    await this.link?.close();
    await this.connect();
    await this.boot('RemoteReset');
  }
}

function sameLimit(a: TransactionLimit | null, b: TransactionLimit): boolean {
  return (
    a !== null &&
    a.maxEnergy === b.maxEnergy &&
    a.maxCost === b.maxCost &&
    a.maxTime === b.maxTime &&
    a.maxSoC === b.maxSoC
  );
}

const now = () => new Date().toISOString();
