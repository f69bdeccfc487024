import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { OCPP21 } from 'typed-ocpp';
import { frameProblems } from './strict-frames.js';

/**
 * A frame the 2.1 schemas refuse, the gateway's or the peer's own; or (`follow-up`) what the
 * station does once it has answered a call (a transaction started) that failed.
 */
export interface Violation {
  from: 'gateway' | 'peer' | 'follow-up';
  frame: unknown;
  problems: string[];
}

export type Payload = Record<string, unknown>;

/** The station's answer to a call: its payload, and what it does once the answer is sent. */
export interface Answer {
  reply: object;
  then?: () => Promise<void>;
}

/** Answers one call from the gateway; undefined: the station does not implement it. */
export type Serve = (action: string, params: Payload) => Answer | undefined;

const CALL_TIMEOUT_MS = 10_000;

interface Pending {
  call: unknown[];
  resolve: (payload: Payload) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One OCPP-J 2.1 connection, the peer's own framing over `ws`: every frame in either direction is
 * checked by typed-ocpp before anything else reads it. A call from the gateway that fails is
 * answered with a CALLERROR, as a strict station does; a result that fails rejects the call; each
 * is kept in `violations`. The peer's own frames are checked too, so the peer cannot excuse the
 * gateway by being lax itself.
 */
export class Link21 {
  private readonly pending = new Map<string, Pending>();

  private constructor(
    private readonly ws: WebSocket,
    private readonly serve: Serve,
    private readonly violations: Violation[],
  ) {
    ws.on('message', (data) => this.receive(data.toString('utf8')));
    ws.on('close', () => {
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`connection closed before the answer to ${String(p.call[2])}`));
        this.pending.delete(id);
      }
    });
  }

  static async open(
    url: string,
    identity: string,
    password: string,
    serve: Serve,
    violations: Violation[],
  ): Promise<Link21> {
    const auth = Buffer.from(`${identity}:${password}`).toString('base64');
    const ws = new WebSocket(`${url}/${encodeURIComponent(identity)}`, ['ocpp2.1'], {
      headers: { authorization: `Basic ${auth}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) =>
        reject(new Error(`handshake answered ${res.statusCode}`)),
      );
    });
    if (ws.protocol !== 'ocpp2.1') {
      ws.terminate();
      throw new Error(`the gateway chose "${ws.protocol}", not ocpp2.1`);
    }
    return new Link21(ws, serve, violations);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends a CALL and resolves with the gateway's valid CALLRESULT payload. */
  call(action: string, params: object): Promise<Payload> {
    const frame = [OCPP21.MessageType.CALL, randomUUID(), action, params];
    this.ownFrame(frame);
    const id = frame[1] as string;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${action} within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { call: frame, resolve, reject, timer });
      this.ws.send(JSON.stringify(frame));
    });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise((resolve) => this.ws.once('close', resolve));
    this.ws.close(1000);
    await closed;
  }

  private receive(text: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.violations.push({ from: 'gateway', frame: text, problems: ['not JSON'] });
      return;
    }
    const kind = Array.isArray(frame) ? (frame[0] as unknown) : undefined;
    const id = Array.isArray(frame) ? (frame[1] as unknown) : undefined;
    const pending = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (kind === OCPP21.MessageType.CALL) return this.answer(frame as unknown[]);
    if (!pending || typeof id !== 'string') {
      this.violations.push({ from: 'gateway', frame, problems: ['answers no pending call'] });
      return;
    }
    clearTimeout(pending.timer);
    this.pending.delete(id);
    const problems = frameProblems(frame, pending.call);
    const action = String(pending.call[2]);
    if (problems.length > 0) {
      this.violations.push({ from: 'gateway', frame, problems });
      pending.reject(new Error(`the gateway's answer to ${action} is not valid 2.1`));
    } else if (kind === OCPP21.MessageType.CALLRESULT) {
      pending.resolve((frame as unknown[])[2] as Payload);
    } else {
      const [, , code, description] = frame as string[];
      pending.reject(new Error(`${action} answered CALLERROR ${code}: ${description}`));
    }
  }

  private answer(frame: unknown[]): void {
    const id = typeof frame[1] === 'string' ? frame[1] : '-1';
    const problems = frameProblems(frame);
    if (problems.length > 0) {
      this.violations.push({ from: 'gateway', frame, problems });
      this.sendError(id, 'FormationViolation', problems.join('; ').slice(0, 255));
      return;
    }
    const [, , action, params] = frame as [number, string, string, Payload];
    const answer = this.serve(action, params);
    if (answer === undefined) {
      this.sendError(id, 'NotImplemented', `${action} is not implemented by this station`);
      return;
    }
    const result = [OCPP21.MessageType.CALLRESULT, id, answer.reply];
    const own = frameProblems(result, frame);
    if (own.length > 0) {
      this.violations.push({ from: 'peer', frame: result, problems: own });
      this.sendError(id, 'InternalError', 'the station built an invalid answer');
      return;
    }
    this.ws.send(JSON.stringify(result));
    void answer.then?.().catch((error: unknown) => {
      this.violations.push({ from: 'follow-up', frame, problems: [String(error)] });
    });
  }

  private sendError(id: string, code: OCPP21.ErrorCode | string, description: string): void {
    const frame = [OCPP21.MessageType.CALLERROR, id, code, description, {}];
    this.ownFrame(frame);
    this.ws.send(JSON.stringify(frame));
  }

  /** The peer's own frame must be valid 2.1: a peer bug is thrown at once, never sent. */
  private ownFrame(frame: unknown[]): void {
    const problems = frameProblems(frame);
    if (problems.length === 0) return;
    this.violations.push({ from: 'peer', frame, problems });
    throw new Error(`the peer built an invalid ${String(frame[2])}: ${problems.join('; ')}`);
  }
}
