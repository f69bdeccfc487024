import { stepOf } from '../calls/step-outcome.js';
import type { StepOutcome, SessionTariff, TransactionLimit } from '../port.js';
import { triggerMessage } from '../v201/calls/trigger-message.js';
import type { ConnectionContext201 } from '../v201/connection-context.js';
import type { TransactionEventConf, TransactionEventReq } from '../v201/messages.js';
import type { Bound, TransactionEventHook } from '../v201/transaction-events.js';
import { changeTransactionTariff, readLocalCost } from './tariff.js';
import { TransactionLimitStore, type HeldLimit } from './transaction-limit-store.js';

/** OCPP 2.1 TransactionLimitType, as far as the gateway sends and reads it. */
interface TransactionLimit21 {
  maxEnergy?: number;
  maxCost?: number;
}

/** What a 2.1 TransactionEvent adds to 2.0.1's that the limit and the station's cost read. */
type TransactionEventReq21 = TransactionEventReq & {
  transactionInfo: TransactionEventReq['transactionInfo'] & {
    transactionLimit?: TransactionLimit21;
  };
  costDetails?: {
    totalCost?: { total?: { exclTax?: number; inclTax?: number } };
    totalUsage?: { energy?: number };
    failureToCalculate?: boolean;
  };
};

/** The triggers with which a 2.1 station ends a transaction at the limit it holds. */
const LIMIT_TRIGGERS = new Set(['EnergyLimitReached', 'CostLimitReached']);

/**
 * The paid limit held by a 2.1 station itself (docs/ocpp.md "OCPP 2.1: the paid limit on the
 * station"). The charging side's verdict on the accepting TransactionEvent carries the limit
 * (`TokenVerdict.limit`); it is stored per transaction and sent as `transactionLimit` in the
 * answer to that event and to every later one until the station confirms it (`LimitSet`, its
 * `transactionInfo.transactionLimit`), so a lost answer or a repeated frame gets it again. A
 * station that confirms another limit, or ends the transaction without ever confirming, is noted
 * for the operator. `maxCost` (whole NGN paid) goes only to a station that computes cost
 * (`TariffCostCtrlr.Enabled[Tariff]`) and took the session's tariff (ChangeTransactionTariff).
 */
export class TransactionLimits21 implements TransactionEventHook {
  private readonly store: TransactionLimitStore;
  /** Whether the station computes cost itself, read at configure time. */
  private localCost = false;

  constructor(private readonly conn: ConnectionContext201) {
    this.store = TransactionLimitStore.of(conn.ctx.db);
  }

  /** Reads whether the station computes cost; a station that does not answer computes none. */
  async configure(): Promise<void> {
    this.localCost = await readLocalCost(this.conn).catch(() => false);
  }

  answer(
    req: TransactionEventReq,
    tx: Bound | undefined,
    conf: TransactionEventConf,
  ): TransactionEventConf {
    const { chargerId } = this.conn.ctx;
    const id = req.transactionInfo.transactionId;
    const verdict = tx?.answered;
    if (verdict?.accepted && verdict.limit) {
      const made = this.store.hold(
        chargerId,
        id,
        tx?.evseId ?? null,
        verdict.limit,
        verdict.tariff,
      );
      if (made && this.localCost && verdict.tariff) this.sendTariff(id, verdict.tariff);
    }
    let held = this.store.get(chargerId, id);
    if (!held) return conf;
    const req21 = req as TransactionEventReq21;
    const heard = req21.transactionInfo.transactionLimit;
    if (heard) held = this.confirmed(id, heard, held);
    this.stationCost(req21);
    if (req.eventType === 'Ended') {
      this.ended(id, held, req);
      return conf;
    }
    if (tx?.verdict !== 'accepted') return conf;
    const limit = this.limitOf(held);
    const cost = limit.maxCost ?? null;
    const holds = held.confirmedAt !== null && held.confirmedEnergyWh === limit.maxEnergy;
    if (holds && held.confirmedCostNgn === cost) return conf;
    if (held.sentEnergyWh !== limit.maxEnergy || held.sentCostNgn !== cost)
      this.store.sent(chargerId, id, limit.maxEnergy, cost, this.conn.now());
    return { ...conf, transactionLimit: limit } as TransactionEventConf;
  }

  /** An end at the station's own limit says so, whatever `stoppedReason` (2.1 has no cost one). */
  endReason(req: TransactionEventReq): string | undefined {
    return LIMIT_TRIGGERS.has(req.triggerReason) ? req.triggerReason : undefined;
  }

  /**
   * A new limit for a running transaction (an operator's stop, the stop ladder): stored, then
   * the station is prompted for an event whose answer carries it. Rejected for a transaction the
   * gateway holds no limit for, or one that has ended.
   */
  async set(transactionId: string, limit: TransactionLimit): Promise<StepOutcome> {
    const { chargerId } = this.conn.ctx;
    const tx = this.conn.txs.get(chargerId, transactionId);
    if (!tx || tx.ended || !this.store.change(chargerId, transactionId, limit)) return 'rejected';
    return stepOf(await triggerMessage(this.conn, tx.evseId, 'TransactionEvent'));
  }

  private limitOf(held: HeldLimit): { maxEnergy: number; maxCost?: number } {
    const costTaken = held.tariffStatus === 'Accepted';
    return { maxEnergy: held.energyWh, ...(costTaken && { maxCost: held.costNgn }) };
  }

  private confirmed(id: string, heard: TransactionLimit21, held: HeldLimit): HeldLimit {
    const energy = heard.maxEnergy ?? null;
    const cost = heard.maxCost ?? null;
    if (
      held.confirmedAt !== null &&
      held.confirmedEnergyWh === energy &&
      held.confirmedCostNgn === cost
    )
      return held;
    const at = this.conn.now();
    this.store.confirmed(this.conn.ctx.chargerId, id, energy, cost, at);
    const other =
      held.sentEnergyWh !== null &&
      (energy !== held.sentEnergyWh || (held.sentCostNgn !== null && cost !== held.sentCostNgn));
    if (other) {
      this.conn.ctx.reports.noted('TransactionEvent', 'station holds another limit than sent', {
        transactionId: id,
        sent: { maxEnergy: held.sentEnergyWh, maxCost: held.sentCostNgn },
        held: heard,
      });
    }
    return { ...held, confirmedEnergyWh: energy, confirmedCostNgn: cost, confirmedAt: at };
  }

  private ended(id: string, held: HeldLimit, req: TransactionEventReq): void {
    if (held.sentEnergyWh !== null && held.confirmedAt === null) {
      this.conn.ctx.reports.noted('TransactionEvent', 'station never confirmed the limit sent', {
        transactionId: id,
        sent: { maxEnergy: held.sentEnergyWh, maxCost: held.sentCostNgn },
        triggerReason: req.triggerReason,
      });
    }
  }

  /** The cost the station computed (running or final), handed to the charging side to compare. */
  private stationCost(req: TransactionEventReq21): void {
    const details = req.costDetails;
    const total = details?.totalCost?.total;
    const totalNgn = total?.inclTax ?? total?.exclTax;
    const energyWh = details?.totalUsage?.energy;
    if (details?.failureToCalculate || totalNgn === undefined || energyWh === undefined) return;
    this.conn.ctx.events().stationCost?.({
      chargerId: this.conn.ctx.chargerId,
      transactionRef: req.transactionInfo.transactionId,
      kind: req.eventType === 'Ended' ? 'final' : 'running',
      totalNgn,
      energyWh,
    });
  }

  /**
   * After the accepting answer has gone out: the session's tariff; once taken, the limit gains
   * `maxCost` and the station is prompted for an event to carry it.
   */
  private sendTariff(id: string, tariff: SessionTariff): void {
    const { ctx } = this.conn;
    setImmediate(() => {
      void (async () => {
        const status = await changeTransactionTariff(this.conn, id, tariff);
        this.store.tariffAnswered(ctx.chargerId, id, status);
        if (status !== 'Accepted') {
          ctx.reports.noted('ChangeTransactionTariff', 'session tariff not taken', {
            transactionId: id,
            status,
          });
          return;
        }
        const evseId = this.store.get(ctx.chargerId, id)?.evseId ?? null;
        await triggerMessage(this.conn, evseId, 'TransactionEvent');
      })().catch((err: unknown) =>
        ctx.log.warn(
          { chargerId: ctx.chargerId, transactionId: id, err: (err as Error).message },
          'session tariff not delivered',
        ),
      );
    });
  }
}
