import type { AdapterContext } from '../protocol-adapter.js';

/**
 * What a charger tells the central system about itself that the gateway does not act on, in
 * either protocol: each is answered with the schema's answer (a charger resends a call it gets a
 * CALLERROR for, and may queue it for ever) and kept in ocpp_events for the operator. The
 * handlers named after each message, per version, call these.
 */

/** Answered `answer` (the schema's empty or fixed reply) and recorded with its payload. */
export function recorded<Answer extends object>(action: string, answer: Answer, note = 'noted') {
  return ({ ctx }: { ctx: AdapterContext }, req: unknown): Answer => {
    ctx.reports.noted(action, note, req);
    return answer;
  };
}

/** SecurityEventNotification's fields, the same in both versions. */
export interface SecurityEventReq {
  type: string;
  timestamp: string;
  techInfo?: string;
}

/**
 * A security event (the 1.6 security whitepaper's and 2.0.1's SecurityEventNotification, same
 * fields): worth a log line of its own, since it may be an attack on the charger or on us
 * (FailedToAuthenticateAtCsms, TamperDetectionActivated, InvalidFirmwareSignature, …). Counted by
 * fleetgw_ocpp_messages_total like every call; no alert, as many are routine (StartupOfTheDevice
 * at every boot) and the list is the vendor's to extend.
 */
export function securityEvent({ ctx }: { ctx: AdapterContext }, req: SecurityEventReq): object {
  ctx.log.info(
    { chargerId: ctx.chargerId, type: req.type, at: req.timestamp, techInfo: req.techInfo },
    'charger security event',
  );
  ctx.reports.noted('SecurityEventNotification', req.type, req);
  return {};
}
