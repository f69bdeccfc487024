import { Personality, QUEUED_BURST_SAMPLES } from '../../simulators/shared/personalities.js';
import { WireQuirks } from '../../simulators/shared/wire-quirks.js';
import { CHARGER_PASSWORD } from '../helpers/gateway.js';
import { rawCharger, type RawClient } from '../helpers/raw-charger.js';
import {
  frame16,
  frame201,
  type ChargerMsg,
  type ChargerTx,
  type Frame,
  type StatusName,
} from './frames.js';
import type { ChargerKey } from './model.js';

/** A remote start the charger has received and not answered yet: a step answers it later. */
export interface PendingStart {
  connectorId: string;
  idToken: string;
  answer(reply: { status: 'Accepted' | 'Rejected' } | 'callerror'): void;
}

export interface ConnectorSide {
  /** The charger's own energy register, in Wh. */
  register: number;
  tx: ChargerTx | null;
  /** Tokens (and 2.0.1 remoteStartIds) of remote starts this connector received, oldest first. */
  tokens: { idToken: string; remoteStartId: number | null }[];
  status: StatusName;
}

export type Delivered = (charger: SimCharger, msg: ChargerMsg, reply: unknown) => void;

/**
 * A charger driven step by step over a real OCPP socket: it sends only what a step tells it to,
 * holds remote starts until a step answers them, and queues transaction messages while offline
 * (replayed on reconnect, in order for 1.6 and in a step-chosen order for 2.0.1).
 */
export class SimCharger {
  private client: RawClient | null = null;
  readonly connectors = new Map<string, ConnectorSide>();
  readonly pending: PendingStart[] = [];
  readonly queue: ChargerMsg[] = [];
  last: { frame: Frame; msg: ChargerMsg; reply: unknown } | null = null;
  /** 1.6: the last stop it sent with transactionId 0 / -1 (it lost that transaction's id). */
  lastLostIdStop: { tx: ChargerTx; idTag: string | undefined; meterStop: number } | null = null;
  private txCount = 0;
  /** How this charger's firmware puts the frames on the wire (the simulators' personalities). */
  private readonly wire: WireQuirks;
  private readonly personality: Personality;
  /** queued-burst: meter values still to hold back as if offline, then replayed at once. */
  private heldMeters = 0;
  private startWaiter: ((p: PendingStart) => void) | null = null;
  private closeWaiter: (() => void) | null = null;

  constructor(
    readonly key: ChargerKey,
    readonly protocol: 'ocpp1.6' | 'ocpp2.0.1',
    connectorIds: string[],
    private readonly delivered: Delivered,
    personality: readonly string[] = [],
  ) {
    this.personality = Personality.parse(personality, protocol);
    this.wire = new WireQuirks(protocol, this.personality, 'MoneySim');
    for (const id of connectorIds) {
      this.connectors.set(id, { register: 10_000, tx: null, tokens: [], status: 'Available' });
    }
  }

  get online(): boolean {
    return this.client !== null;
  }

  connector(id: string): ConnectorSide {
    const c = this.connectors.get(id);
    if (!c) throw new Error(`${this.key} has no connector ${id}`);
    return c;
  }

  /**
   * `boot`: false for a charger that only lost its link: no BootNotification and no statuses on
   * reconnecting.
   */
  async connect(ocppUrl: string, boot = true): Promise<void> {
    const client = await rawCharger(ocppUrl, this.key, CHARGER_PASSWORD, [this.protocol]);
    const remoteStart = ({ params }: { params?: unknown }) => {
      const p = params as {
        connectorId?: number;
        evseId?: number;
        idTag?: string;
        idToken?: { idToken: string };
        remoteStartId?: number;
      };
      const connectorId = String(p.connectorId ?? p.evseId);
      const idToken = p.idTag ?? p.idToken?.idToken ?? '';
      this.connector(connectorId).tokens.push({
        idToken,
        remoteStartId: p.remoteStartId ?? null,
      });
      return new Promise<Record<string, string>>((resolve, reject) => {
        const pending: PendingStart = {
          connectorId,
          idToken,
          answer: (reply) => {
            this.pending.splice(this.pending.indexOf(pending), 1);
            if (reply === 'callerror') reject(new Error('charger refuses the frame'));
            else resolve(this.wire.result('RemoteStart', reply) as Record<string, string>);
          },
        };
        this.pending.push(pending);
        this.startWaiter?.(pending);
        this.startWaiter = null;
      });
    };
    const remoteStop = ({ params }: { params?: unknown }) => {
      const ref = String((params as { transactionId: number | string }).transactionId);
      for (const c of this.connectors.values()) if (c.tx?.ref === ref) c.tx.stopRequested = true;
      return Promise.resolve(
        this.wire.result('RemoteStop', { status: 'Accepted' }) as Record<string, string>,
      );
    };
    client.handle('RemoteStartTransaction', remoteStart);
    client.handle('RequestStartTransaction', remoteStart);
    client.handle('RemoteStopTransaction', remoteStop);
    client.handle('RequestStopTransaction', remoteStop);
    client.on('close', () => {
      if (this.client !== client) return;
      this.client = null;
      // The gateway fails what it was waiting for; the charger keeps the tokens it heard.
      this.pending.splice(0);
      this.closeWaiter?.();
      this.closeWaiter = null;
    });
    this.client = client;
    // One that only lost its link sends neither: nothing changed that it would report.
    if (!boot) return;
    await this.send({ kind: 'boot' });
    for (const [connectorId, c] of this.connectors) {
      await this.send({ kind: 'status', connectorId, status: c.status });
    }
  }

  /** Resolves when the gateway's next remote start reaches this charger. */
  nextRemoteStart(): Promise<PendingStart> {
    return new Promise((resolve) => (this.startWaiter = resolve));
  }

  /** Resolves once the socket is closed (by us or by the gateway). */
  closed(): Promise<void> {
    if (!this.client) return Promise.resolve();
    return new Promise((resolve) => (this.closeWaiter = resolve));
  }

  async disconnect(): Promise<void> {
    const done = this.closed();
    await this.client?.close({ force: true });
    await done;
  }

  newTx(connectorId: string, idToken: string, remoteStartId: number | null): ChargerTx {
    this.txCount += 1;
    return {
      connectorId,
      idToken,
      ref: this.protocol === 'ocpp2.0.1' ? `${this.key}-tx-${this.txCount}` : null,
      remoteStartId,
      trueWh: 0,
      seqNo: 0,
      stopRequested: false,
      deliveredMax: null,
    };
  }

  /** Sends now when online, else queues it (a transaction message) or drops it (anything else). */
  async send(msg: ChargerMsg): Promise<void> {
    const held = msg.kind === 'meter' && this.heldMeters > 0;
    if (held) this.heldMeters -= 1;
    if (!this.client || (held && this.heldMeters > 0)) {
      if (msg.kind === 'start' || msg.kind === 'meter' || msg.kind === 'stop') {
        msg.offline = true;
        this.queue.push(msg);
      }
      return;
    }
    // queued-burst: the link comes "back" (the last held sample, or a start or stop that cannot
    // wait): what it held goes first, in the order it was measured.
    const burst = this.personality.has('queued-burst') && this.queue.length > 0;
    if (burst && msg.kind !== 'boot' && msg.kind !== 'status') {
      this.heldMeters = 0;
      for (const queued of this.queue.splice(0)) await this.send(queued);
    }
    if (msg.kind === 'start' && this.personality.has('queued-burst')) {
      this.heldMeters = QUEUED_BURST_SAMPLES;
    }
    const frame = this.frame(msg);
    const reply = await this.client.call(frame.method, frame.params);
    if (msg.kind === 'start' && this.protocol === 'ocpp1.6') {
      msg.tx.ref = String((reply as { transactionId: number }).transactionId);
    }
    const wh =
      msg.kind === 'start'
        ? msg.meterStart
        : msg.kind === 'boot' || msg.kind === 'status'
          ? null
          : msg.wh;
    if (wh !== null && 'tx' in msg) msg.tx.deliveredMax = Math.max(msg.tx.deliveredMax ?? 0, wh);
    this.last = { frame, msg, reply };
    this.delivered(this, msg, reply);
  }

  /** A frame outside the simulation's bookkeeping (a charger bug); returns the gateway's answer. */
  async callRaw(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.client) throw new Error(`${this.key} is offline`);
    return this.client.call(method, params);
  }

  /** The last frame again, as after a lost reply; returns both answers. */
  async repeatLast(): Promise<{ first: unknown; again: unknown }> {
    if (!this.client || !this.last) throw new Error('nothing to repeat');
    const again = await this.client.call(this.last.frame.method, this.last.frame.params);
    return { first: this.last.reply, again };
  }

  /** Delivers the offline queue; 2.0.1 events go in the order `order` picks (they carry seqNos). */
  async flush(order: number): Promise<void> {
    const queued = this.queue.splice(0);
    if (this.protocol === 'ocpp2.0.1') permute(queued, order);
    for (const msg of queued) await this.send(msg);
  }

  private frame(msg: ChargerMsg): Frame {
    const now = new Date().toISOString();
    const frame = this.protocol === 'ocpp1.6' ? frame16(msg, now) : frame201(msg, now);
    return { ...frame, params: this.wire.request(frame.method, frame.params) as Frame['params'] };
  }
}

/** A deterministic shuffle driven by `seed` (a small LCG: the order must replay exactly). */
function permute<T>(items: T[], seed: number): void {
  let state = (seed >>> 0) + 1;
  for (let i = items.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    const j = state % (i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
