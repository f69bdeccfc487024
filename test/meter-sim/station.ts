import { CHARGER_PASSWORD } from '../helpers/gateway.js';
import { rawCharger, type RawClient } from '../helpers/raw-charger.js';
import {
  acceptVariables,
  remoteStartOf,
  type Frame,
  type RemoteStart,
} from '../helpers/raw-stations.js';
import type { Protocol } from './classes.js';

const realSleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One charger over a raw socket, as the field has them: it answers the gateway's settings, starts
 * what it is asked to, and tells the run when a stop reaches it. While its link is down (taken
 * down, dropped, or the gateway gone) it queues what it would send and replays the queue unchanged
 * once it is back; a frame whose reply never came is sent again, as a retry.
 */
export class Station {
  private cp: RawClient | null = null;
  private readonly queue: Frame[] = [];
  /** The run took the link down (an outage): frames queue even if a socket could be opened. */
  offline = false;
  readonly remoteStarts: RemoteStart[] = [];
  /** When each stop reached the charger (our clock, ms). */
  readonly stopsAt: number[] = [];
  /** Whether the first stop reached it while its own messages were held back (an outage, a queue). */
  firstStopInOutage: boolean | null = null;
  /** Frames sent, by action, for the run's record. */
  readonly sent = new Map<string, number>();
  /** Every frame the gateway answered with a CALLERROR or left unanswered: `Action: error`. */
  readonly unanswered: string[] = [];

  constructor(
    readonly protocol: Protocol,
    private readonly ocppUrl: () => string,
    readonly identity = 'CP-1',
  ) {}

  get online(): boolean {
    return this.cp !== null && !this.offline;
  }

  async connect(): Promise<void> {
    const cp = await rawCharger(this.ocppUrl(), this.identity, CHARGER_PASSWORD, [this.protocol]);
    this.handle(cp);
    cp.once('close', () => {
      if (this.cp === cp) this.cp = null;
    });
    this.cp = cp;
  }

  /** Opens the link again, trying until `deadlineMs` (the gateway may be starting). */
  async reconnect(deadlineMs: number): Promise<void> {
    for (;;) {
      try {
        await this.connect();
        return;
      } catch (err) {
        if (Date.now() > deadlineMs) throw err;
        await realSleep(50);
      }
    }
  }

  /** Drops the socket (the peer sees it close); the queue and the transaction carry on. */
  async drop(): Promise<void> {
    const cp = this.cp;
    this.cp = null;
    await cp?.close({ force: true });
  }

  /** Sends at once when online, else queues; a frame whose call fails is queued, to be sent again. */
  async send(frame: Frame): Promise<unknown> {
    this.sent.set(frame.action, (this.sent.get(frame.action) ?? 0) + 1);
    if (!this.online || this.queue.length > 0) {
      this.queue.push(frame);
      return undefined;
    }
    return this.call(frame);
  }

  /** Sends what was queued, in order, while the link holds. */
  async flush(): Promise<void> {
    while (this.online && this.queue.length > 0) {
      const frame = this.queue.shift() as Frame;
      await this.call(frame, true);
    }
  }

  get queued(): number {
    return this.queue.length;
  }

  private async call(frame: Frame, front = false): Promise<unknown> {
    const cp = this.cp as RawClient;
    try {
      return await cp.call(frame.action, frame.params);
    } catch (err) {
      // A CALLERROR (or no answer on a link that holds) is the gateway's doing: the run records
      // it. A lost link is not: the frame is sent again later.
      if (cp.state === 1) {
        this.unanswered.push(`${frame.action}: ${String(err)}`);
        return { callError: String(err) };
      }
      if (this.cp === cp) this.cp = null;
      if (front) this.queue.unshift(frame);
      else this.queue.push(frame);
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.drop();
  }

  private handle(cp: RawClient): void {
    const stopped = async () => {
      this.stopsAt.push(Date.now());
      this.firstStopInOutage ??= this.offline || this.queue.length > 0;
      return { status: 'Accepted' };
    };
    const started = async ({ params }: { params?: unknown }) => {
      this.remoteStarts.push(remoteStartOf(params));
      return { status: 'Accepted' };
    };
    cp.handle('RemoteStartTransaction', started);
    cp.handle('RequestStartTransaction', started);
    cp.handle('RemoteStopTransaction', stopped);
    cp.handle('RequestStopTransaction', stopped);
    cp.handle('SetVariables', async ({ params }) => acceptVariables(params));
  }
}
