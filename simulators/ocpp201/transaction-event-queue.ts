import { isRpcErrorResponse } from '../shared/rpc-client.js';
import type { TransactionEventRequest, TransactionEventResponse } from './ocpp-types.js';

// Delivered events kept per transaction for replayTransactionEvents(); older ones are dropped.
const HISTORY_TRANSACTIONS = 50;

export interface QueueTransport {
  /** The socket is up (events created while it is down are marked offline). */
  isOnline(): boolean;
  send(request: TransactionEventRequest): Promise<TransactionEventResponse>;
  /** A first delivery was answered (not called for duplicates and replays). */
  delivered(request: TransactionEventRequest, response: TransactionEventResponse): void;
  /** Waits before the next attempt after a failure; false when the station went off. */
  pause(): Promise<boolean>;
  warn(message: string, error?: unknown): void;
}

interface Entry {
  request: TransactionEventRequest;
  replay: boolean;
  settle: () => void;
}

/**
 * TransactionEvents leave in the order they happened, each retried with the same seqNo and
 * content until the CSMS answers, as the 2.0.1 spec requires for billing data. Events that
 * happen while the socket is down are marked `offline` and wait for the reconnect.
 *
 * enqueue() resolves once its event was answered, or as soon as it has to wait (offline or
 * behind an event that failed), so a driver action never blocks on the network.
 */
export class TransactionEventQueue {
  /** Send every TransactionEvent twice (a test hook for duplicate handling). */
  duplicate = false;
  private readonly entries: Entry[] = [];
  private readonly history = new Map<string, TransactionEventRequest[]>();
  private draining = false;
  // The head failed; later events wait behind it and their callers move on.
  private blocked = false;

  constructor(private readonly transport: QueueTransport) {}

  get size(): number {
    return this.entries.length;
  }

  hasQueued(transactionId?: string): boolean {
    return this.entries.some(
      (entry) =>
        transactionId === undefined ||
        entry.request.transactionInfo.transactionId === transactionId,
    );
  }

  enqueue(request: TransactionEventRequest): Promise<void> {
    if (!this.transport.isOnline()) request.offline = true;
    return this.push(request, false);
  }

  /** Sends the already delivered events of a transaction again, unchanged and in order. */
  async replay(transactionId: string): Promise<number> {
    const delivered = this.history.get(transactionId) ?? [];
    await Promise.all(delivered.map((request) => this.push(structuredClone(request), true)));
    return delivered.length;
  }

  /** Starts delivering (after a reconnect, or to retry after a failure). */
  drain(): void {
    void this.deliverAll();
  }

  private push(request: TransactionEventRequest, replay: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.entries.push({ request, replay, settle: resolve });
      if (!this.transport.isOnline() || this.blocked) resolve();
      else this.drain();
    });
  }

  private async deliverAll(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.entries.length > 0 && this.transport.isOnline()) {
        const entry = this.entries[0];
        if (!entry) break;
        const delivered = await this.deliver(entry);
        if (delivered) continue;
        // Release every waiting caller; the events stay queued.
        for (const waiting of this.entries) waiting.settle();
        if (!this.transport.isOnline() || !(await this.transport.pause())) break;
      }
    } finally {
      this.draining = false;
    }
  }

  /** True when the entry left the queue (answered, or refused for good). */
  private async deliver(entry: Entry): Promise<boolean> {
    const { request } = entry;
    const label = `TransactionEvent ${request.eventType} seqNo ${request.seqNo}`;
    let response: TransactionEventResponse;
    try {
      response = await this.transport.send(request);
    } catch (error) {
      if (!isRpcErrorResponse(error)) {
        this.blocked = true;
        this.transport.warn(`${label} not delivered; it will be retried`, error);
        return false;
      }
      // A CALLERROR means the CSMS refused the content; the same content would be refused again.
      this.transport.warn(`${label} refused by the CSMS; dropped`, error);
      response = {};
    }
    this.entries.shift();
    this.blocked = false;
    if (this.duplicate && !entry.replay) {
      await this.transport.send(request).catch((error: unknown) => {
        this.transport.warn(`duplicate of ${label} failed`, error);
      });
    }
    if (!entry.replay) {
      this.remember(request);
      this.transport.delivered(request, response);
    }
    entry.settle();
    return true;
  }

  private remember(request: TransactionEventRequest): void {
    const id = request.transactionInfo.transactionId;
    const events = this.history.get(id) ?? [];
    events.push(request);
    this.history.set(id, events);
    if (this.history.size > HISTORY_TRANSACTIONS) {
      const oldest = this.history.keys().next().value;
      if (oldest !== undefined) this.history.delete(oldest);
    }
  }
}
