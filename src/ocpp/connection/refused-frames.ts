import type { Logger } from '../../shared/log.js';
import type { ChargerReports } from '../charger-state/reports.js';

/** OCPP 2.1's SEND: a message with no answer (NotifyPeriodicEventStream). */
const SEND = 6;

/** What the central system reads of ocpp-rpc's report of a frame it refused. */
export interface RefusingClient {
  on(event: 'badMessage', listener: (event: { buffer: unknown }) => void): void;
}

/**
 * ocpp-rpc 2.2.1 knows CALL, CALLRESULT and CALLERROR only: a SEND frame never reaches a handler,
 * and ocpp-rpc answers it with a CALLERROR MessageTypeNotSupported under message id -1 (it refuses
 * the frame before reading its id; a SEND wants no answer, and a station ignores a CALLERROR for an
 * id it never used). Each one is counted as a deviation and kept, so
 * the operator sees what a station streamed and that the gateway could not take it. Other frames
 * ocpp-rpc refuses are its own business (it answers them, as before).
 */
export function countRefusedFrames(
  raw: RefusingClient,
  chargerId: string,
  reports: Pick<ChargerReports, 'deviation' | 'noted'>,
  log: Logger,
): void {
  raw.on('badMessage', ({ buffer }) => {
    const frame = parsed(buffer);
    if (!Array.isArray(frame) || frame[0] !== SEND) return;
    const action = typeof frame[2] === 'string' ? frame[2] : 'unnamed';
    reports.deviation(`${action} SEND message_type_not_supported`, frame[3] ?? null);
    reports.noted(action, 'SEND frame not received: ocpp-rpc takes no message type 6', frame[3]);
    log.info({ chargerId, action }, 'charger sent a SEND frame: counted, not received');
  });
}

function parsed(buffer: unknown): unknown {
  try {
    return JSON.parse(String(buffer));
  } catch {
    return null;
  }
}
