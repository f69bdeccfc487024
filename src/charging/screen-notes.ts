import type {
  ChargerCommands,
  MeterSample,
  ScreenNote,
  TokenVerdict,
  TransactionEnded,
  TransactionStarted,
} from '../ocpp/port.js';
import { costDown, settle } from '../pricing/money.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { ChargerEventListener } from './charger-event-dispatcher.js';
import { deliveredWh } from './meter-track.js';
import { trackOf, type Session, type SessionStore } from './session-store.js';
import { finalText, paidText, runningText } from './screen-texts.js';

export interface ScreenNotesDeps {
  sessions: SessionStore;
  /** The driver's wallet balance now (whole NGN). */
  balance: (driverId: string) => number;
  chargers: Pick<ChargerCommands, 'showOnScreen' | 'showsNothing'>;
  clock: Clock;
  log: Logger;
  /** A session's running cost goes out at most this often. */
  runningEveryMs: number;
}

const OPEN = new Set(['authorizing', 'authorized', 'charging', 'stopping']);

/**
 * Decides what a paid session's driver reads at the charger, whatever started the session (an app
 * Start, a card, a vehicle): the amount paid and the wallet after the debit when the token is
 * accepted and the transaction starts, the cost so far on the meter samples (at most every
 * `runningEveryMs`, and only when it moved), and the settled cost with the credit back. The
 * charger port says it the way the charger can, or not at all (adapters' screen.ts). It listens
 * after the lifecycle decided: it reads the session, never changes it, and a failure here is
 * logged and never reaches the charger's answer or the money.
 */
export class ScreenNotes implements ChargerEventListener {
  private readonly lastRunning = new Map<string, { atMs: number; costNgn: number }>();

  constructor(private readonly d: ScreenNotesDeps) {}

  /** The message an Authorize answer carries for a token of an open session on this charger. */
  authorizedMessage(chargerId: string, idToken: string): string | undefined {
    // A charger known to show nothing costs no reads (its session, its driver's balance).
    if (this.d.chargers.showsNothing(chargerId)) return undefined;
    return this.guarded(() => {
      const s = this.d.sessions.byIdToken(idToken);
      if (!s || s.chargerId !== chargerId || !OPEN.has(s.state)) return undefined;
      return paidText(s.amount, s.limitWh, this.d.balance(s.driverId));
    });
  }

  /** An accepted verdict with the driver's message added, unless it has one. */
  withMessage(verdict: TokenVerdict, chargerId: string, idToken: string): TokenVerdict {
    if (!verdict.accepted || verdict.message !== undefined) return verdict;
    const message = this.authorizedMessage(chargerId, idToken);
    return message === undefined ? verdict : { ...verdict, message };
  }

  transactionStarted(e: TransactionStarted, verdict: TokenVerdict): void {
    if (!verdict.accepted || this.d.chargers.showsNothing(e.chargerId)) return;
    this.guarded(() => {
      const s = this.d.sessions.byTransactionRef(e.chargerId, e.transactionRef);
      if (!s) return;
      // Nothing used yet: the first running cost is the first that moved.
      this.lastRunning.set(`${e.chargerId} ${e.transactionRef}`, { atMs: 0, costNgn: 0 });
      const walletNgn = this.d.balance(s.driverId);
      this.show({
        ...this.base(s, e.transactionRef, 0),
        kind: 'paid',
        idToken: e.idToken,
        paidNgn: s.amount,
        walletNgn,
        text: verdict.message ?? paidText(s.amount, s.limitWh, walletNgn),
      });
    });
  }

  meterSample(m: MeterSample): void {
    if (m.transactionRef === null || !m.live || m.energyWh === null) return;
    if (this.d.chargers.showsNothing(m.chargerId)) return;
    const key = `${m.chargerId} ${m.transactionRef}`;
    const nowMs = this.d.clock.now();
    const last = this.lastRunning.get(key);
    if (last && nowMs - last.atMs < this.d.runningEveryMs) return;
    const transactionRef = m.transactionRef;
    this.guarded(() => {
      const s = this.d.sessions.byTransactionRef(m.chargerId, transactionRef);
      if (!s || (s.state !== 'charging' && s.state !== 'stopping') || s.meterStartWh === null)
        return;
      const energyWh = deliveredWh(trackOf(s));
      const costNgn = Math.min(s.amount, costDown(energyWh, s.microNgnPerWh));
      if (last?.costNgn === costNgn) return;
      // Sessions settled without an end leave their entry: a bound, not a leak.
      if (this.lastRunning.size >= 4096) this.lastRunning.clear();
      this.lastRunning.set(key, { atMs: nowMs, costNgn });
      this.show({
        ...this.base(s, transactionRef, energyWh),
        kind: 'running',
        costNgn,
        paidNgn: s.amount,
        registerWh: m.energyWh,
        timestamp: m.timestamp,
        text: runningText(costNgn, s.amount, energyWh),
      });
    });
  }

  transactionEnded(e: TransactionEnded, drawing: Session | undefined): void {
    this.lastRunning.delete(`${e.chargerId} ${e.transactionRef}`);
    if (!drawing || this.d.chargers.showsNothing(e.chargerId)) return;
    this.guarded(() => {
      const s = this.d.sessions.get(drawing.id);
      if (s?.state !== 'settled' || s.deliveredWh === null) return;
      const { cost, credit } = settle(s.amount, s.deliveredWh, s.microNgnPerWh);
      const walletNgn = this.d.balance(s.driverId);
      this.show({
        ...this.base(s, e.transactionRef, s.deliveredWh),
        kind: 'final',
        costNgn: cost,
        creditedNgn: credit,
        walletNgn,
        text: finalText(cost, s.deliveredWh, credit, walletNgn),
      });
    });
  }

  private base(s: Session, transactionRef: string, energyWh: number) {
    return {
      chargerId: s.chargerId,
      connectorId: s.connectorId,
      transactionRef,
      ngnPerKwh: s.microNgnPerWh / 1000,
      energyWh,
    };
  }

  /** Called inside the charger's message: what can ride on its answer is taken synchronously. */
  private show(note: ScreenNote): void {
    void this.d.chargers.showOnScreen(note).then(
      (outcome) =>
        this.d.log.debug(
          {
            chargerId: note.chargerId,
            transactionRef: note.transactionRef,
            kind: note.kind,
            outcome,
          },
          'screen note',
        ),
      (err: unknown) => this.d.log.warn({ err }, 'screen note failed'),
    );
  }

  private guarded<T>(work: () => T): T | undefined {
    try {
      return work();
    } catch (err) {
      this.d.log.warn({ err: (err as Error).message }, 'screen note not made');
      return undefined;
    }
  }
}
