import type { ChargerCommands } from '../ocpp/port.js';
import type { Logger } from '../shared/log.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';

export interface RefusedTransactionsOptions {
  log: Logger;
  chargers: ChargerCommands;
  /** First pause between stops; it doubles. */
  retryMs: number;
  /** After an accepted stop, how long the charger gets to report the end before another. */
  verifyMs: number;
}

/** Stops sent for one refused transaction at the most (answered or not): bounded by design. */
const MAX_STOPS = 5;

/**
 * Transactions the gateway answered Invalid (an unknown token, a start after the refund, a local
 * start): nothing pays for them, so besides the Invalid answer (which a charger configured with
 * StopTransactionOnInvalidId acts on) each gets a remote stop, sent again until the charger
 * reports the end, at most MAX_STOPS times. Kept in memory: a restart forgets them, and the
 * charger's own StopTransactionOnInvalidId is the lasting guard.
 */
export class RefusedTransactions {
  private readonly open = new Map<string, () => void>();
  private closed = false;

  constructor(private readonly o: RefusedTransactionsOptions) {}

  /** Starts stopping the transaction once the Invalid answer has gone out. */
  refused(chargerId: string, transactionRef: string): void {
    const key = `${chargerId}\u0000${transactionRef}`;
    if (this.open.has(key)) return;
    this.open.set(key, () => undefined);
    setImmediate(() => {
      this.loop(key, chargerId, transactionRef).catch((err: unknown) =>
        this.o.log.error(
          { chargerId, transactionRef, err: (err as Error).message },
          'refused transaction stop failed',
        ),
      );
    });
  }

  /** The charger reported the transaction's end: nothing more to send. */
  ended(chargerId: string, transactionRef: string): void {
    const key = `${chargerId}\u0000${transactionRef}`;
    const wake = this.open.get(key);
    this.open.delete(key);
    wake?.();
  }

  close(): void {
    this.closed = true;
    for (const wake of this.open.values()) wake();
    this.open.clear();
  }

  private async loop(key: string, chargerId: string, transactionRef: string): Promise<void> {
    let pauseMs = this.o.retryMs;
    for (let sent = 0; sent < MAX_STOPS; sent++) {
      if (this.closed || !this.open.has(key)) return;
      let reply = 'offline';
      if (this.o.chargers.isOnline(chargerId)) {
        try {
          reply = await this.o.chargers.requestStop(chargerId, transactionRef);
        } catch (err) {
          reply = (err as Error).message;
        }
      }
      this.o.log.warn({ chargerId, transactionRef, reply }, 'refused transaction: stop sent');
      await this.pause(key, reply === 'accepted' ? this.o.verifyMs : pauseMs);
      pauseMs *= 2;
    }
    if (this.open.delete(key))
      this.o.log.error(
        { chargerId, transactionRef },
        'refused transaction not reported ended: gave up',
      );
  }

  private pause(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const open = this.open;
      function done() {
        clearUnrefTimer(timer);
        resolve();
      }
      if (open.has(key)) open.set(key, done);
      else done();
    });
  }
}
