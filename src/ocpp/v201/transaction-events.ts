import { atomic } from '../../store/atomic.js';
import type { ChargerTime } from '../charger-state/charger-clocks.js';
import { isoAt } from '../../shared/clock.js';
import { groupCommit } from '../../store/group-commit.js';
import type { AdapterContext } from '../protocol-adapter.js';
import type { TokenVerdict } from '../port.js';
import { authorizationStatus } from './authorization-status.js';
import { reportReading } from '../metering/report-reading.js';
import type { TransactionEventConf, TransactionEventReq } from './messages.js';
import { withIntervalRegister } from './interval-register.js';
import { latestReading201, registerAt } from './meter-values.js';
import { statusAfterEnd, statusFromChargingState } from './status.js';
import type { Screen201, ScreenAnswer } from './screen.js';
import type { Transaction201, Transactions201 } from './transactions.js';

/**
 * TransactionEvent, the one message through which a 2.0.1 charger reports a transaction's start,
 * progress and end. Events may come late (offline queues), twice (a retry after a lost reply) or
 * out of order; each is applied at most once by its seqNo, and a transaction is reported to the
 * charging layer as started once (when its EVSE and our token are both known, whichever event
 * brings them) and as ended once.
 */
export class TransactionEvents201 {
  /** What a later version adds (OCPP 2.1's transaction limit); none for a 2.0.1 station. */
  private hook: TransactionEventHook | null = null;

  constructor(
    private readonly ctx: AdapterContext,
    private readonly txs: Transactions201,
    private readonly screen: Screen201,
  ) {}

  /**
   * Most events are meter samples: committed with the turn's other writes (group commit) without
   * waiting for the disk, unless the batch moved money or a session's state, which is synced
   * before the answer (store/durability.ts). A Started event (its `charging` change) and an
   * Ended one (the settlement) are synced either way: strict, so that a burst of stops is
   * gathered into one fsync and a Start's `authorized` mark is not held behind theirs
   * (group-commit.ts).
   */
  handle(req: TransactionEventReq): Promise<TransactionEventConf> {
    const g = groupCommit(this.ctx.db);
    // What the charging side tells the driver meanwhile may ride on the answer (screen.ts).
    const work = () => {
      const { result, screen } = this.screen.during(req.transactionInfo.transactionId, () =>
        this.apply(req),
      );
      return withScreen(result, screen);
    };
    // An Updated event that brings the token of a transaction not yet judged (TxStartPoint
    // before Authorized) may open a tap's paid session: its debit is synced before the answer, as
    // a Started one's. A charger repeating the token in every sample keeps them relaxed.
    const judging =
      req.idToken !== undefined &&
      (this.txs.get(this.ctx.chargerId, req.transactionInfo.transactionId)?.verdict ?? null) ===
        null;
    return req.eventType === 'Updated' && !judging ? g.relaxed(work) : g.strict(work);
  }

  /** A later version's additions to every event's answer and end (v21/transaction-limit.ts). */
  extend(hook: TransactionEventHook): void {
    this.hook = hook;
  }

  /**
   * The charger answered a RequestStartTransaction with the id of a transaction it had already
   * started when the EV was plugged in (TxStartPoint EVConnected): that transaction is the
   * session's now, even if the charger never repeats our token in an event.
   */
  adopt(transactionId: string, evseId: number, idToken: string): void {
    const { chargerId } = this.ctx;
    atomic(this.ctx.db, () => {
      this.txs.open(chargerId, transactionId, this.now());
      const tx = this.txs.fill(chargerId, transactionId, { evseId, idToken, meterStartWh: null });
      const nowMs = this.ctx.clock.now();
      const time = { stampMs: nowMs, atMs: nowMs, ageMs: 0, live: true, epoch: null };
      this.bind(tx, this.connectorOf(tx), nowMs, this.now(), null, time);
    });
  }

  private now(): string {
    return isoAt(this.ctx.clock.now());
  }

  private apply(req: TransactionEventReq): TransactionEventConf {
    const { ctx, txs } = this;
    const chargerId = ctx.chargerId;
    const transactionId = req.transactionInfo.transactionId;
    const receivedAtMs = ctx.clock.now();
    const time = ctx.clocks.observe(chargerId, req.timestamp, receivedAtMs, req.offline === true);
    const { seen, known } = txs.see(chargerId, req, this.now());
    const note = { transactionId, seqNo: req.seqNo, eventType: req.eventType };
    if (seen === 'repeat') {
      ctx.reports.noted('TransactionEvent', 'repeated event answered again', note);
      return this.extended(req, known, this.answer(req, known));
    }
    if (seen === 'reused_seq_no') {
      ctx.reports.noted('TransactionEvent', 'seqNo reused for another event: applied', note);
    }

    const meterValues = req.meterValue ?? [];
    const reading = withIntervalRegister(
      ctx.db,
      chargerId,
      transactionId,
      latestReading201(meterValues),
      'transaction',
    );
    const beginWh = registerAt(meterValues, 'Transaction.Begin');
    const remoteStartId = req.transactionInfo.remoteStartId;
    let tx: Bound = txs.fill(
      chargerId,
      transactionId,
      {
        evseId: req.evse?.id ?? null,
        idToken:
          req.idToken?.idToken ??
          (remoteStartId === undefined ? null : txs.tokenOfRemoteStart(chargerId, remoteStartId)),
        meterStartWh:
          req.eventType === 'Started' ? (beginWh ?? reading?.energyWh ?? null) : beginWh,
      },
      known,
    );
    const connectorId = this.connectorOf(tx);
    if (connectorId && !req.offline) {
      // A queued event describes the past: it must not overwrite what the connector is now.
      const state = req.transactionInfo.chargingState;
      const status =
        req.eventType === 'Ended' ? statusAfterEnd(state) : state && statusFromChargingState(state);
      if (status) ctx.reports.status(connectorId, status, null);
    }

    tx = this.bind(tx, connectorId, receivedAtMs, req.timestamp, reading?.energyWh ?? null, time);

    if (reading && connectorId) {
      const ref = tx.verdict === 'accepted' ? transactionId : null;
      reportReading(ctx, connectorId, reading, ref, req.offline === true);
    }

    if (req.eventType === 'Ended') this.end(tx, req, receivedAtMs, time);
    return this.extended(req, tx, this.answer(req, tx));
  }

  private extended(
    req: TransactionEventReq,
    tx: Bound | undefined,
    conf: TransactionEventConf,
  ): TransactionEventConf {
    return this.hook ? this.hook.answer(req, tx, conf) : conf;
  }

  private connectorOf(tx: Transaction201): string | undefined {
    if (tx.evseId === null) return undefined;
    const connector = this.ctx.site.connectorByOcppId(this.ctx.chargerId, tx.evseId);
    if (!connector) {
      this.ctx.reports.noted('TransactionEvent', 'unconfigured EVSE', {
        transactionId: tx.transactionId,
        evseId: tx.evseId,
      });
    }
    return connector?.id;
  }

  /**
   * Reports the transaction as started once both its EVSE and a token are known, and judges the
   * token. If the transaction's end was heard before its token (events out of order), the end is
   * reported right after, so the session still settles once.
   */
  private bind(
    tx: Transaction201,
    connectorId: string | undefined,
    receivedAtMs: number,
    timestamp: string,
    registerNowWh: number | null,
    time: ChargerTime,
  ): Bound {
    if (tx.verdict !== null || tx.idToken === null || !connectorId) return tx;
    const { ctx } = this;
    const verdict = ctx.events().transactionStarted({
      chargerId: ctx.chargerId,
      connectorId,
      idToken: tx.idToken,
      transactionRef: tx.transactionId,
      meterStartWh: tx.meterStartWh ?? registerNowWh,
      timestamp,
      receivedAtMs,
      time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
      live: time.live,
    });
    const accepted = verdict.accepted;
    this.txs.setVerdict(ctx.chargerId, tx.transactionId, accepted);
    if (!accepted) {
      ctx.reports.noted('TransactionEvent', 'transaction not started by us: Invalid', {
        transactionId: tx.transactionId,
        evseId: tx.evseId,
      });
    }
    const bound: Bound = { ...tx, verdict: accepted ? 'accepted' : 'invalid', answered: verdict };
    if (accepted && tx.ended) {
      ctx.events().transactionEnded({
        chargerId: ctx.chargerId,
        transactionRef: tx.transactionId,
        meterStopWh: tx.meterStopWh,
        reason: tx.stoppedReason ?? 'Local',
        timestamp,
        receivedAtMs,
        time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
        live: time.live,
      });
    }
    return bound;
  }

  private end(
    tx: Transaction201,
    req: TransactionEventReq,
    receivedAtMs: number,
    time: ChargerTime,
  ): void {
    const { ctx } = this;
    const meterValues = req.meterValue ?? [];
    const meterStopWh =
      registerAt(meterValues, 'Transaction.End') ?? latestReading201(meterValues)?.energyWh ?? null;
    // The spec leaves stoppedReason out for a normal local stop.
    const reason = this.hook?.endReason(req) ?? req.transactionInfo.stoppedReason ?? 'Local';
    if (!this.txs.end(ctx.chargerId, tx.transactionId, this.now(), meterStopWh, reason)) {
      ctx.reports.noted('TransactionEvent', 'second Ended for the transaction: ignored', {
        transactionId: tx.transactionId,
        seqNo: req.seqNo,
      });
      return;
    }
    // An Invalid transaction's end is reported too: the gateway stops those (refused-transactions).
    if (tx.verdict === null) return;
    ctx.events().transactionEnded({
      chargerId: ctx.chargerId,
      transactionRef: tx.transactionId,
      meterStopWh,
      reason,
      timestamp: req.timestamp,
      receivedAtMs,
      time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
      live: time.live,
    });
  }

  /**
   * The token's status: as judged at the start when this event started it (ConcurrentTx,
   * NoCredit, ...); Accepted for a later event of an accepted transaction; else as Authorize
   * would answer now (Invalid for a refused transaction whose token would now be accepted).
   */
  private answer(req: TransactionEventReq, tx: Bound | undefined): TransactionEventConf {
    if (!req.idToken) return {};
    if (tx?.answered) return { idTokenInfo: { status: authorizationStatus(tx.answered) } };
    if (tx?.verdict === 'accepted') return { idTokenInfo: { status: 'Accepted' } };
    // Refused, or not judged yet: the token as Authorize says it now, never Accepted for a
    // transaction refused (a repeat of an unknown token's start is Unknown again).
    const now = this.ctx.events().authorize(this.ctx.chargerId, req.idToken.idToken, null);
    const verdict: TokenVerdict =
      tx?.verdict === 'invalid' && now.accepted ? { accepted: false } : now;
    return { idTokenInfo: { status: authorizationStatus(verdict) } };
  }
}

function withScreen(conf: TransactionEventConf, screen: ScreenAnswer): TransactionEventConf {
  const { personalMessage, ...rest } = screen;
  const idTokenInfo =
    conf.idTokenInfo && personalMessage
      ? { ...conf.idTokenInfo, personalMessage }
      : conf.idTokenInfo;
  return { ...conf, ...(idTokenInfo && { idTokenInfo }), ...rest };
}

/** A transaction as this event left it; `answered`: the verdict of a start judged just now. */
export type Bound = Transaction201 & { answered?: TokenVerdict };

/** What a later version adds to TransactionEvent, without changing what 2.0.1 sends. */
export interface TransactionEventHook {
  /** The event's answer, given what 2.0.1 answers; `tx` as the event left it (none: unknown). */
  answer(
    req: TransactionEventReq,
    tx: Bound | undefined,
    conf: TransactionEventConf,
  ): TransactionEventConf;
  /** The end reason when the version says more than `stoppedReason` (undefined: that one). */
  endReason(req: TransactionEventReq): string | undefined;
}
