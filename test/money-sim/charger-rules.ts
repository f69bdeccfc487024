import type { ChargerMsg, ChargerTx } from './frames.js';
import type { ChargerKey, Model, ModelSession } from './model.js';

/**
 * What the gateway must make of each charger message once it is delivered, written from the
 * rules in docs/ocpp.md and docs/money.md rather than from the code: the verdict it must
 * answer and what the message does to the session and the wallet.
 */

/** Gateway-side facts about a transaction that the rules need (2.0.1 events can come in any order). */
interface TxFacts {
  /** The gateway judged the transaction's token (1.6: at StartTransaction; 2.0.1: at Started). */
  judged: boolean;
  session: ModelSession | null;
  /** 2.0.1: an Ended that came before the Started, with the stop register it carried. */
  endedFirst: { meterStop: number | null } | null;
  ended: boolean;
}

export class ChargerRules {
  private readonly facts = new WeakMap<ChargerTx, TxFacts>();
  /** 1.6 starts by (connector, idTag, timestamp): the same again is a retry, answered the same. */
  private readonly starts16 = new Map<string, { accepted: boolean; tx: ChargerTx }>();
  /**
   * 1.6 transactions the gateway's table holds as not stopped, with whether it accepted them: what
   * a stop naming transactionId 0 or -1 (a charger that lost the StartTransaction reply) can mean.
   */
  private readonly open16 = new Map<
    ChargerTx,
    { accepted: boolean; session: ModelSession | null }
  >();

  constructor(private readonly model: Model) {}

  private of(tx: ChargerTx): TxFacts {
    let f = this.facts.get(tx);
    if (!f) {
      f = { judged: false, session: null, endedFirst: null, ended: false };
      this.facts.set(tx, f);
    }
    return f;
  }

  delivered(charger: ChargerKey, msg: ChargerMsg, reply: unknown): void {
    const { model } = this;
    switch (msg.kind) {
      case 'boot':
        model.booted(charger);
        return;
      case 'status': {
        const status = { Available: 'available', Occupied: 'occupied', Faulted: 'faulted' }[
          msg.status
        ];
        const c = { charger, connectorId: msg.connectorId };
        model.setStatus(c, status);
        model.statusFor(c, status, Date.now());
        return;
      }
      case 'start':
        return this.started(charger, msg.tx, msg.meterStart, msg.timestamp, reply);
      case 'meter': {
        const f = this.of(msg.tx);
        // 2.0.1: an Updated that overtook its Started names no EVSE: the gateway cannot place it.
        // Only 2.0.1 flags queued events; a 1.6 sample always counts as live.
        if (f.session)
          model.sample(f.session, msg.wh, !(msg.offline && charger === 'CP-AC'), msg.timestamp);
        return;
      }
      case 'stop': {
        const f = this.of(msg.tx);
        if (f.ended) return;
        f.ended = true;
        this.open16.delete(msg.tx);
        if (!f.judged) {
          model.note('2.0.1 Ended before its Started');
          f.endedFirst = { meterStop: msg.wh };
          return;
        }
        if (!f.session) return;
        // A 2.0.1 Ended's register is also a sample, taken before the settlement.
        if (msg.wh !== null && charger === 'CP-AC')
          model.sample(f.session, msg.wh, !msg.offline, msg.timestamp);
        model.settle(f.session, msg.wh, !(msg.offline && charger === 'CP-AC'));
        return;
      }
    }
  }

  /**
   * The last frame sent again (a lost reply). Starts, stops and 2.0.1 events are recognised as
   * repeats and change nothing; a boot is a boot, a status a status, and a 1.6 MeterValues (which
   * carries no id to recognise it by) is a sample again.
   */
  repeated(charger: ChargerKey, msg: ChargerMsg): void {
    if (msg.kind === 'boot' || msg.kind === 'status') return this.delivered(charger, msg, null);
    if (msg.kind !== 'meter' || charger !== 'CP-1') return;
    const f = this.of(msg.tx);
    if (f.session) this.model.sample(f.session, msg.wh, true, msg.timestamp);
  }

  private started(
    charger: ChargerKey,
    tx: ChargerTx,
    meterStart: number | null,
    timestamp: string,
    reply: unknown,
  ): void {
    const f = this.of(tx);
    const s = this.model.byToken(tx.idToken);
    const key = `${charger}|${tx.connectorId}|${tx.idToken}|${timestamp}`;
    const prior = charger === 'CP-1' ? this.starts16.get(key) : undefined;
    const retryOf = prior?.accepted;
    const accepted =
      retryOf ??
      (s !== undefined &&
        s.connector.charger === charger &&
        s.connector.connectorId === tx.connectorId &&
        (s.phase === 'pending' || s.phase === 'authorized' || s.phase === 'orphaned'));
    const r = reply as { idTagInfo?: { status?: string }; idTokenInfo?: { status?: string } };
    const status = (r.idTagInfo ?? r.idTokenInfo)?.status;
    // A token no session ever had is bound to no driver either: 2.0.1 says Unknown, 1.6 Invalid.
    const refused = s === undefined && charger !== 'CP-1' ? 'Unknown' : 'Invalid';
    const expected = accepted ? 'Accepted' : refused;
    if (status !== expected) {
      throw new Error(
        `${charger} start of ${tx.idToken} on ${tx.connectorId}: gateway answered ${String(status)}, ` +
          `expected ${expected} (session ${s ? `#${s.n} ${s.phase}` : 'unknown'})`,
      );
    }
    f.judged = true;
    // A charger reusing a token on the same connector with the same timestamp is, for the
    // gateway, the earlier start retried: it gets that transaction back, whose session has ended.
    if (prior !== undefined) {
      this.model.note('1.6 start retried (same timestamp)');
      // Its transaction is the earlier one: still open (no stop recorded for it), a stop naming
      // it settles that session, whichever of the charger's two transactions sends it.
      const entry = this.open16.get(prior.tx);
      if (entry) {
        this.open16.delete(prior.tx);
        this.open16.set(tx, entry);
        f.session = entry.session;
        prior.tx = tx;
        // The gateway reads one transaction across the charger's two: the session's register runs
        // from the first start to the second's stop, so its true energy is what both delivered.
        const session = entry.session;
        if (session?.trueWh) {
          const before = session.trueWh;
          session.trueWh = () => before() + tx.trueWh;
        }
        this.model.note('1.6 start retried while its transaction is open');
      }
      return;
    }
    if (charger === 'CP-1') {
      this.starts16.set(key, { accepted, tx });
      this.open16.set(tx, { accepted, session: accepted && s ? s : null });
    }
    if (!accepted || !s) return;
    f.session = s;
    if (s.phase === 'orphaned')
      this.model.note('session left by a crash kept: its charger started it');
    if (s.phase === 'pending')
      this.model.note('transaction started before the remote start was answered');
    if (meterStart === null) this.model.note('2.0.1 start without a register');
    s.phase = 'charging';
    s.transactionRef = tx.ref;
    s.meterStart = meterStart;
    s.track =
      meterStart === null
        ? null
        : { segmentStart: meterStart, carried: 0, last: meterStart, pending: null };
    s.trueWh = () => tx.trueWh;
    if (f.endedFirst) this.model.settle(s, f.endedFirst.meterStop);
  }

  /**
   * A 1.6 StopTransaction naming transactionId 0 or -1, sent for `tx` (the charger lost its
   * StartTransaction reply, so it cannot know whether the gateway accepted it): the gateway
   * takes the not-stopped transaction with the stop's idTag, else (no idTag) the only one on
   * the charger, and settles its session on the stop's register. A transaction the gateway
   * answered Invalid still counts: the charger may hold it as running, and guessing past it
   * would settle another connector's session on this meter. Ambiguous: nothing moves.
   * Returns whether the stop named a transaction (the gateway then answers its idTag).
   */
  lostIdStop(tx: ChargerTx | null, idTag: string | undefined, meterStop: number): boolean {
    if (tx) this.of(tx).ended = true;
    const candidates = [...this.open16].filter(([t]) => idTag === undefined || t.idToken === idTag);
    if (candidates.length !== 1) {
      this.model.note('1.6 stop with transactionId 0: ambiguous, nothing moves');
      return false;
    }
    const [[match, entry]] = candidates as [
      [ChargerTx, { accepted: boolean; session: ModelSession | null }],
    ];
    if (!entry.accepted) {
      this.model.note('1.6 stop with transactionId 0: only a refused transaction matches');
      return false;
    }
    this.open16.delete(match);
    this.of(match).ended = true;
    if (match !== tx) this.model.note('1.6 stop with transactionId 0 matched another transaction');
    this.model.note('1.6 stop with transactionId 0 settles its session');
    if (entry.session) this.model.settle(entry.session, meterStop);
    return true;
  }
}
