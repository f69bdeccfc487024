import { atomic } from '../store/atomic.js';
import type { SiteDirectory } from '../config/site.js';
import { withPaidLimit } from './station-limit.js';
import type { TariffBook } from '../config/tariff-book.js';
import type { Roster } from '../fleet/roster.js';
import type { BoundToken, IdTokenStore } from '../id-tokens/id-token-store.js';
import type { TokenVerdict, TransactionStarted } from '../ocpp/port.js';
import { costDown, paidEnergyWh } from '../pricing/money.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { Wallet } from '../wallet/wallet.js';
import { isUniqueViolation } from './errors.js';
import { newIdToken, newSessionId } from './id-tokens.js';
import type { Session, SessionStore } from './session-store.js';
import { offlineTapAmount, tapAmount, type TapPolicies } from './tap-policy.js';

export interface TapDeskOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  tokens: IdTokenStore;
  roster: Roster;
  wallet: Wallet;
  sessions: SessionStore;
  site: SiteDirectory;
  tariffs: TariffBook;
  policies: TapPolicies;
  /** `sessions.maxAmount`: no tap debits more. */
  maxAmount: number;
  /** The full quote for the vehicle plugged at the connector (Charging), or null when none. */
  quote: (driverId: string, chargerId: string, connectorId: string) => number | null;
  /**
   * Told of an offline start that nothing could be debited for (the gateway raises it as an
   * `operator_loss` alert on `subject`); absent: logged only.
   */
  unbilledOfflineStart?: (subject: string, detail: Record<string, unknown>, at: string) => void;
}

/** A tap's session, opened and debited: the lifecycle marks it charging in the same transaction. */
export interface TapOpened {
  session: Session;
  /** What its 'charging' event says beyond the usual (MQTT sessions topic). */
  detail: { token: string; offline: boolean; limitWh: number };
}

/** The ledger note's actor on the further debit of an offline start. */
export const OFFLINE_DEBIT_ACTOR = 'gateway:offline-start';

/**
 * A tap pays from the wallet (docs/driver-tokens.md "A tap pays"): judges a bound card or vehicle
 * presented at a charger, opens its paid session when the charger starts the transaction (session
 * row, debit with its ledger entry: the caller's transaction, one commit with the charger's
 * answer), and bills a start the charger made offline for what it delivered.
 *
 * Verdicts, in order: not bound → unknown; blocked → blocked; expired → expired; its driver gone
 * or inactive → invalid; its open session on another charger (or connector, at a start) →
 * concurrent; its wallet below the fleet's tap minimum → no_credit. Authorize debits nothing.
 */
export class TapDesk {
  constructor(private readonly o: TapDeskOptions) {}

  /** Authorize: the token's verdict now; the connector is not known yet, nothing is debited. */
  authorize(chargerId: string, raw: string): TokenVerdict {
    const judged = this.judgeToken(raw);
    if ('verdict' in judged) return judged.verdict;
    const { token, driver } = judged;
    const open = this.o.sessions.openOfIdToken(token.id);
    // A tap at the charger its session runs on is the driver stopping it: accepted.
    if (open) return open.chargerId === chargerId ? ACCEPTED : refuse('concurrent');
    const policy = this.o.policies.of(driver.fleetId);
    const amount = tapAmount(policy, this.balance(driver.id), this.o.maxAmount, null);
    return 'refused' in amount ? refuse('no_credit') : ACCEPTED;
  }

  /**
   * The charger started a transaction with a token that is no app session's: a bound token opens
   * a session paid from its driver's wallet, in the caller's transaction. A start the charger made
   * offline (`live` false) is billed whatever the minimum, from what the wallet holds.
   */
  start(e: TransactionStarted, at: string): TapOpened | { verdict: TokenVerdict } {
    const { o } = this;
    const known = o.sessions.byTransactionRef(e.chargerId, e.transactionRef);
    if (known) {
      // The same transaction reported again: its session answers, nothing is debited twice.
      const same = known.origin !== 'app' && known.state !== 'refunded';
      return { verdict: same ? withPaidLimit(ACCEPTED, known) : refuse('invalid') };
    }
    const judged = this.judgeToken(e.idToken);
    if ('verdict' in judged) return judged;
    const { token, driver } = judged;
    const offline = e.live === false;
    if (o.sessions.openOfIdToken(token.id)) return { verdict: refuse('concurrent') };
    const connector = o.site.connector(e.chargerId, e.connectorId);
    const price = connector && o.tariffs.priceAt(connector.tariffId, o.clock.now());
    if (!connector || !price) return { verdict: refuse('invalid') };
    if (o.sessions.openOn(e.chargerId, e.connectorId)) {
      o.log.warn(
        { chargerId: e.chargerId, connectorId: e.connectorId, token: token.masked },
        'tap on a connector another session holds: refused',
      );
      return { verdict: refuse('invalid') };
    }
    const policy = o.policies.of(driver.fleetId);
    const balance = this.balance(driver.id);
    const quoted = policy.mode === 'quote' ? o.quote(driver.id, e.chargerId, e.connectorId) : null;
    let amount: number;
    if (offline) {
      amount = offlineTapAmount(policy, balance, o.maxAmount, quoted);
    } else {
      const judgedAmount = tapAmount(policy, balance, o.maxAmount, quoted);
      if ('refused' in judgedAmount) {
        o.log.info({ token: token.masked, driverId: driver.id }, judgedAmount.reason);
        return { verdict: refuse('no_credit') };
      }
      amount = judgedAmount.amount;
    }
    const limitWh = amount > 0 ? paidEnergyWh(amount, price.microNgnPerWh) : 0;
    if (limitWh < 1) {
      if (offline) this.emptyOfflineStart(e, token, driver.id, balance, at);
      return { verdict: refuse('no_credit') };
    }
    const id = newSessionId(o.clock.now());
    try {
      atomic(o.db, () => {
        o.sessions.insert({
          id,
          driverId: driver.id,
          chargerId: e.chargerId,
          connectorId: e.connectorId,
          amount,
          microNgnPerWh: price.microNgnPerWh,
          limitWh,
          // Never presented by anyone: the session is found by its transaction, not by a token.
          idToken: newIdToken(),
          createdAt: at,
          tariff: { id: price.tariffId, version: price.version, window: price.window },
          tap: { origin: token.kind, idTokenId: token.id, offline },
        });
        o.wallet.debitSession(driver.id, id, amount, at);
      });
    } catch (err) {
      // The schema's one open session per token and per connector: a start that lost a race.
      if (isUniqueViolation(err)) return { verdict: refuse('concurrent') };
      throw err;
    }
    o.log.info(
      { sessionId: id, token: token.masked, origin: token.kind, amount, limitWh, offline },
      'tap: session debited',
    );
    const session = o.sessions.get(id) as Session;
    return { session, detail: { token: token.masked, offline, limitWh } };
  }

  /**
   * Settles the money of a session the charger started offline, after its ordinary settlement (in
   * the same transaction): when the energy delivered cost more than the tap debited, a further
   * debit up to the wallet's balance, its own ledger entry (an adjustment referenced by the
   * session, with a note). Returns the energy the wallet could not pay (Wh): the operator's loss.
   */
  settleOffline(s: Session, deliveredWh: number, at: string): number {
    const { o } = this;
    const due = costDown(deliveredWh, s.microNgnPerWh) - s.amount;
    if (due <= 0) return 0;
    const extra = Math.min(due, this.balance(s.driverId));
    if (extra > 0) {
      o.wallet.credit(s.driverId, 'adjustment', -extra, offlineDebitReference(s.id), at, {
        actor: OFFLINE_DEBIT_ACTOR,
        reason: `offline start: energy beyond the tap debit of session ${s.id}`,
      });
    }
    const unpaidWh = deliveredWh - paidEnergyWh(s.amount + extra, s.microNgnPerWh);
    if (unpaidWh > 0) {
      o.log.warn(
        { sessionId: s.id, deliveredWh, debited: s.amount + extra, unpaidWh },
        'offline start cost more than the wallet holds: operator loss',
      );
    }
    return Math.max(0, unpaidWh);
  }

  private judgeToken(
    raw: string,
  ): { token: BoundToken; driver: { id: string; fleetId: string } } | { verdict: TokenVerdict } {
    const judged = this.o.tokens.judge(raw, this.o.clock.now());
    if (judged.status !== 'accepted') return { verdict: refuse(judged.status) };
    const driver = this.o.roster.driver(judged.token.driverId);
    if (!driver?.active) return { verdict: refuse('invalid') };
    return { token: judged.token, driver };
  }

  private balance(driverId: string): number {
    try {
      return this.o.wallet.balance(driverId);
    } catch {
      return 0;
    }
  }

  /** An offline start on an empty wallet: nothing to debit, no session; raised for the operator. */
  private emptyOfflineStart(
    e: TransactionStarted,
    token: BoundToken,
    driverId: string,
    balance: number,
    at: string,
  ): void {
    const detail = {
      reason: 'offline_empty_wallet',
      chargerId: e.chargerId,
      connectorId: e.connectorId,
      transactionRef: e.transactionRef,
      driverId,
      token: token.masked,
      balance,
    };
    this.o.log.error(detail, 'offline start on a wallet that cannot pay: refused, unbilled');
    this.o.unbilledOfflineStart?.(`${e.chargerId}/${e.transactionRef}`, detail, at);
  }
}

const ACCEPTED: TokenVerdict = { accepted: true, status: 'accepted' };

function refuse(status: Exclude<TokenVerdict['status'], 'accepted' | undefined>): TokenVerdict {
  return { accepted: false, status };
}

/** The further debit's reference: one per session, so it is applied at most once. */
export function offlineDebitReference(sessionId: string): string {
  return `offline-start:${sessionId}`;
}
