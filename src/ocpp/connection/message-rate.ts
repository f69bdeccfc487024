import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import { TokenBucket } from '../../shared/token-bucket.js';

/** What flood control reads of an ocpp-rpc server-side client. */
export interface MessageSource {
  identity: string;
  on(event: 'message', listener: (event: { message: unknown; outbound: boolean }) => void): void;
}

/** Incoming messages per connection: burst, then perSecond; beyond it the link is closed. */
export interface MessageRate {
  perSecond: number;
  burst: number;
}

/**
 * A charger flooding us is disconnected (1008) rather than answered with CALLERRORs: answering
 * would cost as much as the flood itself, and a real charger reconnects and resumes calmly.
 * A charger replaying its offline queue is not a flood, however fast: transaction messages
 * (REPLAYED_ACTIONS) sent one at a time, each after the answer to the one before, do not count
 * against the rate. What is bounded for them is what is outstanding (REPLAY_OUTSTANDING): sent
 * faster than we answer, they count like any other message.
 */
export function limitMessageRate(
  raw: MessageSource,
  close: () => void,
  rate: MessageRate,
  clock: Clock,
  log: Logger,
): void {
  const bucket = new TokenBucket(rate.burst, rate.perSecond, clock);
  let closing = false;
  let outstanding = 0;
  raw.on('message', ({ message, outbound }) => {
    if (outbound) {
      const type = sentType(message);
      if (type === 3 || type === 4) outstanding = Math.max(0, outstanding - 1);
      return;
    }
    const frame = frameOf(message);
    if (frame.type === 2) outstanding++;
    if (closing) return;
    const replay =
      frame.type === 2 && REPLAYED_ACTIONS.has(frame.action) && outstanding <= REPLAY_OUTSTANDING;
    if (replay || bucket.take() === 0) return;
    closing = true;
    log.warn({ chargerId: raw.identity }, 'charger exceeded the message rate: connection closed');
    close();
  });
}

/** What a charger queues while offline and replays on reconnect (1.6 and 2.0.1). */
const REPLAYED_ACTIONS = new Set([
  'StartTransaction',
  'StopTransaction',
  'MeterValues',
  'TransactionEvent',
  'StatusNotification',
]);
/** Unanswered calls a replay may have open: one, as OCPP-J asks, plus a retry in flight. */
const REPLAY_OUTSTANDING = 2;

/**
 * The type of a frame we sent: ocpp-rpc writes it with JSON.stringify, a string message id and no
 * spaces, so the type is the digit after the bracket (every answer, half the frames, unparsed).
 */
function sentType(message: unknown): number {
  const code = typeof message === 'string' ? message.charCodeAt(1) - 48 : frameOf(message).type;
  return code >= 2 && code <= 4 ? code : 0;
}

/** The message type and (for a call) its action, read from the frame's head without parsing it all. */
function frameOf(message: unknown): { type: number; action: string } {
  const text = typeof message === 'string' ? message : String(message);
  const head = /^\s*\[\s*([2-4])\s*,\s*"(?:[^"\\]|\\.)*"\s*(?:,\s*"([A-Za-z]+)")?/.exec(text);
  return { type: head ? Number(head[1]) : 0, action: head?.[2] ?? '' };
}
