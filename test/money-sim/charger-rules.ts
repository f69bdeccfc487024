import type { ChargerMsg, ChargerTx } from './frames.js';
import type { ChargerKey, Model, ModelSession } from './model.js';

/**
 * What the gateway must make of each charger message once it is delivered, written from the
 * rules in the README ("OCPP behaviour", "Money") rather than from the code: the verdict it must
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
  private readonly starts16 = new Map<string, boolean>();

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
        return;
      case 'status': {
        const status = { Available: 'available', Occupied: 'occupied', Faulted: 'faulted' }[
          msg.status
        ];
        model.setStatus({ charger, connectorId: msg.connectorId }, status);
        return;
      }
      case 'start':
        return this.started(charger, msg.tx, msg.meterStart, msg.timestamp, reply);
      case 'meter': {
        const f = this.of(msg.tx);
        // 2.0.1: an Updated that overtook its Started names no EVSE: the gateway cannot place it.
        // Only 2.0.1 flags queued events; a 1.6 sample always counts as live.
        if (f.session) model.sample(f.session, msg.wh, !(msg.offline && charger === 'CP-AC'));
        return;
      }
      case 'stop': {
        const f = this.of(msg.tx);
        if (f.ended) return;
        f.ended = true;
        if (!f.judged) {
          model.note('2.0.1 Ended before its Started');
          f.endedFirst = { meterStop: msg.wh };
          return;
        }
        if (!f.session) return;
        // A 2.0.1 Ended's register is also a sample, taken before the settlement.
        if (msg.wh !== null && charger === 'CP-AC') model.sample(f.session, msg.wh, !msg.offline);
        model.settle(f.session, msg.wh);
        return;
      }
    }
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
    const retryOf = charger === 'CP-1' ? this.starts16.get(key) : undefined;
    const accepted =
      retryOf ??
      (s !== undefined &&
        s.connector.charger === charger &&
        s.connector.connectorId === tx.connectorId &&
        (s.phase === 'pending' || s.phase === 'authorized' || s.phase === 'orphaned'));
    const r = reply as { idTagInfo?: { status?: string }; idTokenInfo?: { status?: string } };
    const status = (r.idTagInfo ?? r.idTokenInfo)?.status;
    const expected = accepted ? 'Accepted' : 'Invalid';
    if (status !== expected) {
      throw new Error(
        `${charger} start of ${tx.idToken} on ${tx.connectorId}: gateway answered ${String(status)}, ` +
          `expected ${expected} (session ${s ? `#${s.n} ${s.phase}` : 'unknown'})`,
      );
    }
    f.judged = true;
    // A charger reusing a token on the same connector with the same timestamp is, for the
    // gateway, the earlier start retried: it gets that transaction back, whose session has ended.
    if (retryOf !== undefined) {
      this.model.note('1.6 start retried (same timestamp)');
      return;
    }
    if (charger === 'CP-1') this.starts16.set(key, accepted);
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
    s.lastMeter = meterStart;
    s.trueWh = () => tx.trueWh;
    if (f.endedFirst) this.model.settle(s, f.endedFirst.meterStop);
  }
}
