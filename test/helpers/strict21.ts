import { createRequire } from 'node:module';
import type { RawClient } from './raw-charger.js';

interface Validator {
  validate(schemaId: string, params: unknown): unknown;
}

const load = createRequire(import.meta.url);
const { createValidator } = load('ocpp-rpc/lib/validator.js') as {
  createValidator(subprotocol: string, schemas: unknown): Validator;
};
/**
 * 2.1's official schemas under their own names (`urn:<Action>Request` / `Response`), built here
 * and not by the gateway's renaming (connection/official-schemas.ts): the check is independent.
 */
const schemas21 = createValidator('ocpp2.1', load('ocpp-rpc/lib/schemas/ocpp2_1.json'));

/** What the gateway sent a station: its calls and its answers, each checked. */
export interface SentFrames {
  /** Every action the gateway called, in order. */
  calls: string[];
  /** Every call of the station's the gateway answered, in order. */
  answered: string[];
  /** A frame that broke 2.1's schema, or a CALLERROR: what and why. */
  problems: string[];
}

/**
 * Records every frame the gateway sends on the station's connection and checks it against 2.1's
 * schemas: a call against its Request, an answer against the Response of the station's call
 * (found by the message id), and a CALLERROR is a problem in itself.
 */
export function checkSentFrames(cp: RawClient, sent: SentFrames): void {
  const ours = new Map<string, string>();
  cp.on('message', ({ message, outbound }: { message: unknown; outbound: boolean }) => {
    const frame = JSON.parse(String(message)) as unknown[];
    const [type, id] = frame as [number, string];
    if (outbound) {
      if (type === 2) ours.set(id, frame[2] as string);
      return;
    }
    if (type === 2) {
      const action = frame[2] as string;
      sent.calls.push(action);
      check(sent, `${action}Request`, frame[3]);
    } else if (type === 3) {
      const action = ours.get(id) ?? 'unknown';
      sent.answered.push(action);
      check(sent, `${action}Response`, frame[2]);
    } else {
      sent.problems.push(`CALLERROR to ${ours.get(id) ?? id}: ${JSON.stringify(frame.slice(2))}`);
    }
  });
}

function check(sent: SentFrames, schema: string, payload: unknown): void {
  try {
    schemas21.validate(`urn:${schema}`, payload);
  } catch (err) {
    sent.problems.push(`${schema}: ${(err as Error).message} ${JSON.stringify(payload)}`);
  }
}

export const noFrames = (): SentFrames => ({ calls: [], answered: [], problems: [] });
