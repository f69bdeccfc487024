import { ChargePoint201 } from '../ocpp201/charge-point.js';
import type { ChargePoint201Options } from '../ocpp201/charge-point.js';
import type { Evse, Transaction } from '../ocpp201/evse.js';
import type {
  ReadingContext,
  TransactionEventRequest,
  TransactionEventResponse,
  TransactionLimit,
  TriggerReason,
} from '../ocpp201/ocpp-types.js';
import type { EventExtras } from '../ocpp201/transaction-lifecycle.js';
import { handlerRegistrar } from '../shared/rpc-client.js';
import type { RpcClient } from '../shared/rpc-client.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import type { IncomingCalls21 } from './ocpp-messages.js';
import { judgeTariff, TransactionCost } from './tariff.js';
import type { Tariff } from './tariff.js';

export type ChargePoint21Options = ChargePoint201Options;
export type { Tariff } from './tariff.js';
export type { TransactionLimit } from '../ocpp201/ocpp-types.js';

type Conf<M extends keyof IncomingCalls21> = Promise<IncomingCalls21[M]['conf']>;

/** What the 2.1 station keeps of a running transaction beyond 2.0.1's. */
interface Running {
  evse: Evse;
  startedAt: string;
  startMs: number;
  chargingSecondsAtStart: number;
  /** The transactionLimit it holds (what its LimitSet confirmed). */
  limit?: TransactionLimit;
  cost?: TransactionCost;
  /** It has begun to end the transaction at the limit. */
  stopping: boolean;
}

/** The energy since the start at which the station stops, and the trigger it reports. */
interface Cap {
  energyWh: number;
  trigger: 'EnergyLimitReached' | 'CostLimitReached';
}

/**
 * A simulated OCPP 2.1 charging station: the 2.0.1 station on subprotocol `ocpp2.1`, strict
 * against 2.1's schemas, plus what 2.1 adds for prepaid charging: it takes the
 * `transactionLimit` of any TransactionEventResponse, confirms it with a `LimitSet` event and
 * stops the energy at `maxEnergy` (or at `maxCost` under its tariff) as the energy flows (E16);
 * it computes the cost locally from a tariff (ChangeTransactionTariff, SetDefaultTariff) and
 * reports it in `costDetails` (I-section).
 */
export class ChargePoint21 extends ChargePoint201 {
  private readonly running = new Map<string, Running>();
  /** SetDefaultTariff per EVSE id (0: the whole station). */
  private readonly defaultTariffs = new Map<number, Tariff>();

  constructor(options: ChargePoint21Options) {
    super(options, 'ocpp2.1');
    this.deviceModel.addLocalCost(!this.settings.personality.has('no-local-cost'));
  }

  /** TariffCostCtrlr.Enabled for both `Tariff` and `Cost`. */
  get localCost(): boolean {
    const enabled = (instance: string) =>
      this.deviceModel.getBoolean('TariffCostCtrlr', 'Enabled', instance);
    return enabled('Tariff') && enabled('Cost');
  }

  /** The limit the EVSE's running transaction holds (undefined: none). */
  heldLimit(connectorId: number): TransactionLimit | undefined {
    const tx = this.evse(connectorId).transaction;
    const limit = tx && this.running.get(tx.id)?.limit;
    return limit && { ...limit };
  }

  protected override registerHandlers(client: RpcClient): void {
    super.registerHandlers(client);
    // Without local cost calculation the calls are not implemented: a CALLERROR NotImplemented.
    if (this.settings.personality.has('no-local-cost')) return;
    const handle = handlerRegistrar<IncomingCalls21>(client, (method, result) =>
      this.wire.result(method, result),
    );
    handle('ChangeTransactionTariff', (req) => this.changeTransactionTariff(req));
    handle('SetDefaultTariff', (req) => this.setDefaultTariff(req));
    handle('GetTariffs', (req) => this.getTariffs(req));
    handle('ClearTariffs', (req) => this.clearTariffs(req));
  }

  // ---------------------------------------------------------------- events

  protected override transactionEvent(
    tx: Transaction,
    eventType: TransactionEventRequest['eventType'],
    triggerReason: TriggerReason,
    extras: EventExtras = {},
  ): TransactionEventRequest {
    const request = super.transactionEvent(tx, eventType, triggerReason, extras);
    const running = this.running.get(tx.id) ?? this.track(tx);
    if (!running) return request;
    if (triggerReason === 'LimitSet') {
      request.transactionInfo.transactionLimit = { ...running.limit };
    }
    if (running.cost && this.localCost) {
      request.transactionInfo.tariffId = running.cost.tariff.tariffId;
      request.costDetails = this.costDetails(running, tx);
    }
    if (eventType === 'Ended') this.running.delete(tx.id);
    return request;
  }

  /** A transaction began (its Started event is being built): the default tariff prices it. */
  private track(tx: Transaction): Running | undefined {
    const evse = this.evses.find((candidate) => candidate.transaction === tx);
    if (!evse) return undefined;
    const startedAt = new Date().toISOString();
    const tariff = this.defaultTariffs.get(evse.id) ?? this.defaultTariffs.get(0);
    const running: Running = {
      evse,
      startedAt,
      startMs: performance.now(),
      chargingSecondsAtStart: evse.chargingSeconds,
      stopping: false,
      ...(tariff && this.localCost ? { cost: new TransactionCost(tariff, startedAt) } : {}),
    };
    this.running.set(tx.id, running);
    return running;
  }

  private costDetails(running: Running, tx: Transaction): TransactionEventRequest['costDetails'] {
    const { evse, cost } = running;
    if (!cost) return undefined;
    const elapsed = ((performance.now() - running.startMs) / 1000) * this.timeFactor;
    const charging = evse.chargingSeconds - running.chargingSecondsAtStart;
    return cost.details(evse.registerWh - tx.meterStart, charging, elapsed - charging);
  }

  // ---------------------------------------------------------------- the transaction limit

  protected override onTransactionEventAnswered(
    request: TransactionEventRequest,
    response: TransactionEventResponse,
  ): void {
    super.onTransactionEventAnswered(request, response);
    const given = response.transactionLimit;
    const running = this.running.get(request.transactionInfo.transactionId);
    if (!given || !running || running.stopping) return;
    const held = this.takeable(given);
    if (sameLimit(held, running.limit ?? {})) return;
    running.limit = held;
    const { evse } = running;
    this.defer(async () => {
      const tx = evse.transaction;
      if (!tx || this.running.get(tx.id) !== running) return;
      // LimitSet first: a limit already passed then ends the transaction right after it.
      const confirmed = this.sendTransactionEvent(tx, 'Updated', 'LimitSet');
      this.armLimit(evse);
      await confirmed;
    });
  }

  /**
   * What of a limit this station holds: `maxEnergy`, and `maxCost` when it computes cost
   * locally. It does not enforce `maxTime` or `maxSoC`, so it does not hold them either: the
   * CSMS reads that from the LimitSet.
   */
  private takeable(given: TransactionLimit): TransactionLimit {
    return {
      ...(given.maxEnergy === undefined ? {} : { maxEnergy: given.maxEnergy }),
      ...(given.maxCost === undefined || !this.localCost ? {} : { maxCost: given.maxCost }),
    };
  }

  /** The nearer of the energy and the cost limit, in energy since the start. */
  private capOf(running: Running): Cap | undefined {
    const { limit, cost } = running;
    const caps: Cap[] = [];
    if (limit?.maxEnergy !== undefined) {
      caps.push({ energyWh: limit.maxEnergy, trigger: 'EnergyLimitReached' });
    }
    if (limit?.maxCost !== undefined && cost && this.localCost) {
      caps.push({ energyWh: cost.energyForCost(limit.maxCost), trigger: 'CostLimitReached' });
    }
    return caps
      .filter((cap) => Number.isFinite(cap.energyWh))
      .reduce<Cap | undefined>(
        (near, cap) => (near && near.energyWh <= cap.energyWh ? near : cap),
        undefined,
      );
  }

  /**
   * Every change to what flows (start, state, profile, limit, tariff) comes through here, as it
   * does through the 100 % check: the meter's own cap stops the energy at the limit, and a timer
   * set for that instant ends the transaction.
   */
  protected override scheduleFullCheck(evse: Evse): void {
    super.scheduleFullCheck(evse);
    this.armLimit(evse);
  }

  private armLimit(evse: Evse): void {
    const name = `limit:${evse.id}`;
    const tx = evse.transaction;
    const running = tx && this.running.get(tx.id);
    if (!tx || !running) {
      evse.capEnergy(undefined);
      this.timers.clear(name);
      return;
    }
    // Ending at the limit: the cap holds until the transaction is over.
    if (running.stopping) return;
    const cap = this.capOf(running);
    const personality = this.settings.personality;
    const enforcesAsItFlows =
      !personality.has('limit-ignored') && !personality.has('limit-overshoot');
    if (!cap || !enforcesAsItFlows) {
      evse.capEnergy(undefined);
      this.timers.clear(name);
      return;
    }
    const registerWh = tx.meterStart + cap.energyWh;
    evse.capEnergy(registerWh);
    if (evse.energyCapReached) {
      this.timers.clear(name);
      this.stopAtLimit(evse, cap.trigger);
      return;
    }
    const seconds = evse.simSecondsUntilRegister(registerWh);
    if (seconds === undefined || !Number.isFinite(seconds)) this.timers.clear(name);
    else this.timers.after(name, seconds, async () => this.armLimit(evse));
  }

  /** limit-overshoot: the limit is looked at only when a meter sample is taken, in that sample. */
  protected override async sendTransactionSample(
    evse: Evse,
    measurands: readonly SimMeasurand[],
    context: ReadingContext,
  ): Promise<void> {
    // The register as the sample reads it (the sample's own reading follows within microseconds).
    const sampledWh = evse.reading().registerWh;
    await super.sendTransactionSample(evse, measurands, context);
    if (!this.settings.personality.has('limit-overshoot')) return;
    const tx = evse.transaction;
    const running = tx && this.running.get(tx.id);
    const cap = running && this.capOf(running);
    if (tx && cap && sampledWh - tx.meterStart >= cap.energyWh) this.stopAtLimit(evse, cap.trigger);
  }

  /**
   * Ends the transaction at its limit (or, with TxStopPoint EVConnected alone, stops the energy
   * until the EV leaves). ReasonEnumType has no cost reason: both limits end EnergyLimitReached.
   */
  private stopAtLimit(evse: Evse, trigger: Cap['trigger']): void {
    const tx = evse.transaction;
    const running = tx && this.running.get(tx.id);
    if (!tx || !running || running.stopping) return;
    running.stopping = true;
    this.defer(async () => {
      if (evse.transaction === tx) await this.deauthorize(evse, 'EnergyLimitReached', trigger);
    });
  }

  // ---------------------------------------------------------------- tariffs

  private async changeTransactionTariff({
    transactionId,
    tariff,
  }: IncomingCalls21['ChangeTransactionTariff']['req']): Conf<'ChangeTransactionTariff'> {
    const evse = this.evses.find((candidate) => candidate.transaction?.id === transactionId);
    const tx = evse?.transaction;
    const running = tx && this.running.get(tx.id);
    if (!evse || !tx || !running) return { status: 'TxNotFound' };
    if (!this.localCost) return { status: 'Rejected' };
    const verdict = judgeTariff(tariff);
    if (verdict !== 'Accepted') return { status: verdict };
    if (running.cost && running.cost.tariff.currency !== tariff.currency) {
      return { status: 'NoCurrencyChange' };
    }
    // The first tariff prices the transaction from its start; a change, from now on.
    if (running.cost) {
      const energyWh = evse.reading().registerWh - tx.meterStart;
      running.cost.change(tariff, new Date().toISOString(), energyWh);
    } else running.cost = new TransactionCost(tariff, running.startedAt);
    this.defer(async () => {
      if (evse.transaction !== tx) return;
      const reported = this.sendTransactionEvent(tx, 'Updated', 'TariffChanged');
      this.armLimit(evse);
      await reported;
    });
    return { status: 'Accepted' };
  }

  private async setDefaultTariff({
    evseId,
    tariff,
  }: IncomingCalls21['SetDefaultTariff']['req']): Conf<'SetDefaultTariff'> {
    if (!this.localCost) return { status: 'Rejected' };
    if (evseId !== 0 && !this.evses.some((evse) => evse.id === evseId)) {
      return { status: 'Rejected' };
    }
    const verdict = judgeTariff(tariff);
    if (verdict === 'Accepted') this.defaultTariffs.set(evseId, tariff);
    return { status: verdict };
  }

  private async getTariffs({ evseId }: IncomingCalls21['GetTariffs']['req']): Conf<'GetTariffs'> {
    const onEvse = (id: number) => evseId === 0 || id === 0 || id === evseId;
    const defaults = [...this.defaultTariffs]
      .filter(([id]) => onEvse(id))
      .map(([id, tariff]) => ({
        tariffId: tariff.tariffId,
        tariffKind: 'DefaultTariff' as const,
        ...(id === 0 ? {} : { evseIds: [id] }),
      }));
    const drivers = [...this.running.values()].flatMap(({ evse, cost }) =>
      cost && onEvse(evse.id)
        ? [
            {
              tariffId: cost.tariff.tariffId,
              tariffKind: 'DriverTariff' as const,
              evseIds: [evse.id],
            },
          ]
        : [],
    );
    const tariffAssignments = [...defaults, ...drivers];
    return tariffAssignments.length === 0
      ? { status: 'NoTariff' }
      : { status: 'Accepted', tariffAssignments };
  }

  /** Clears default tariffs; a running transaction keeps the tariff it is priced by. */
  private async clearTariffs({
    tariffIds,
    evseId,
  }: IncomingCalls21['ClearTariffs']['req']): Conf<'ClearTariffs'> {
    const cleared = new Set<string>();
    for (const [id, tariff] of [...this.defaultTariffs]) {
      if (evseId !== undefined && id !== evseId) continue;
      if (tariffIds && !tariffIds.includes(tariff.tariffId)) continue;
      this.defaultTariffs.delete(id);
      cleared.add(tariff.tariffId);
    }
    const named = tariffIds ?? [...cleared];
    if (named.length === 0) return { clearTariffsResult: [{ status: 'NoTariff' }] };
    return {
      clearTariffsResult: named.map((tariffId) => ({
        tariffId,
        status: cleared.has(tariffId) ? 'Accepted' : 'NoTariff',
      })),
    };
  }
}

function sameLimit(a: TransactionLimit, b: TransactionLimit): boolean {
  return a.maxEnergy === b.maxEnergy && a.maxCost === b.maxCost;
}
