import { isRpcErrorResponse } from '../shared/rpc-client.js';
import type {
  MeterValuesRequest,
  OutgoingCalls,
  StartTransactionRequest,
  StopTransactionRequest,
} from './ocpp-types.js';

/**
 * OCPP 1.6 §4.7: StartTransaction, transaction MeterValues and StopTransaction must reach the
 * central system, in the order they happened, even across a loss of connection. Messages made
 * while the link is down (or behind one that could not be delivered) wait here and are sent in
 * order when it is back.
 *
 * A transaction started offline has no id yet: it runs under a provisional negative id, and when
 * the queued StartTransaction is answered the id the central system assigned replaces it in every
 * later queued message (and in the running transaction, through `assigned`).
 */
type Entry =
  | { action: 'StartTransaction'; params: StartTransactionRequest; provisionalId: number }
  | { action: 'MeterValues'; params: MeterValuesRequest }
  | { action: 'StopTransaction'; params: StopTransactionRequest };

export interface QueueLink {
  isOpen(): boolean;
  call<M extends 'StartTransaction' | 'MeterValues' | 'StopTransaction'>(
    action: M,
    params: OutgoingCalls[M]['req'],
  ): Promise<OutgoingCalls[M]['conf']>;
  /** A queued StartTransaction was answered: the provisional id now has its real one. */
  assigned(provisionalId: number, conf: OutgoingCalls['StartTransaction']['conf']): void;
  warn(message: string, error?: unknown): void;
}

export class TransactionMessageQueue {
  private readonly entries: Entry[] = [];
  private flushing = false;
  // Callers that arrived while a flush was running; woken when it stops.
  private readonly waiting: (() => void)[] = [];
  private nextProvisionalId = -1;

  constructor(private readonly link: QueueLink) {}

  get size(): number {
    return this.entries.length;
  }

  /** Whether a new message must wait behind others (or for the link). */
  get mustQueue(): boolean {
    return this.entries.length > 0 || !this.link.isOpen();
  }

  /** Queues a StartTransaction made offline; returns the provisional transaction id. */
  queueStart(params: StartTransactionRequest): number {
    const provisionalId = this.nextProvisionalId--;
    this.entries.push({ action: 'StartTransaction', params, provisionalId });
    return provisionalId;
  }

  /**
   * Sends now if nothing waits and the link is up; otherwise queues. Resolves once the message
   * was delivered or has to wait (link down, or behind one that failed). Never throws.
   */
  async deliver(entry: Exclude<Entry, { action: 'StartTransaction' }>): Promise<void> {
    this.entries.push(entry);
    await this.flush();
  }

  /**
   * Sends what waits, in order, until the queue is empty or a message cannot be delivered. A call
   * during a running flush (whose loop also sends what was queued since) resolves when it stops:
   * returning at once would let a caller act as if its message had been answered, e.g. report a
   * stopped transaction or reboot while its StopTransaction is still in flight.
   */
  async flush(): Promise<void> {
    if (this.flushing) return new Promise((resolve) => this.waiting.push(resolve));
    this.flushing = true;
    try {
      while (this.entries.length > 0 && this.link.isOpen()) {
        const entry = this.entries[0] as Entry;
        try {
          await this.send(entry);
        } catch (error) {
          if (!isRpcErrorResponse(error)) {
            this.link.warn(`${entry.action} queued for redelivery`, error);
            return;
          }
          // A CALLERROR is the central system's answer: resending would be refused again.
          this.link.warn(`${entry.action} refused by the central system`, error);
        }
        this.entries.shift();
      }
    } finally {
      this.flushing = false;
      for (const wake of this.waiting.splice(0)) wake();
    }
  }

  private async send(entry: Entry): Promise<void> {
    if (entry.action === 'StartTransaction') {
      const conf = await this.link.call('StartTransaction', entry.params);
      this.renumber(entry.provisionalId, conf.transactionId);
      this.link.assigned(entry.provisionalId, conf);
    } else if (entry.action === 'MeterValues') {
      await this.link.call('MeterValues', entry.params);
    } else {
      await this.link.call('StopTransaction', entry.params);
    }
  }

  private renumber(provisionalId: number, transactionId: number): void {
    for (const entry of this.entries) {
      if (entry.action !== 'StartTransaction' && entry.params.transactionId === provisionalId)
        entry.params.transactionId = transactionId;
    }
  }
}
