import type { ConnectionContext201 } from '../../v201/connection-context.js';
import { connectorStatusReported } from '../../v201/handlers/status-notification.js';
import { availabilityOf, type EventData } from '../availability-event.js';

interface NotifyEventReq {
  eventData: EventData[];
}

/**
 * Kept for the operator, as in 2.0.1; and a connector's AvailabilityState (2.1's way to report a
 * status, availability-event.ts) is taken as a StatusNotification would be.
 */
export function notifyEvent(conn: ConnectionContext201, req: NotifyEventReq) {
  const { ctx } = conn;
  ctx.reports.noted('NotifyEvent', 'noted', req);
  for (const data of req.eventData) {
    const reading = availabilityOf(data);
    if (reading === null) continue;
    if ('problem' in reading) {
      ctx.reports.noted('NotifyEvent', reading.problem, data);
      continue;
    }
    if (reading.respelled)
      ctx.reports.deviation('NotifyEvent eventData[].actualValue availability_case', data);
    connectorStatusReported(conn, reading.evseId, reading.status, 'NotifyEvent', data);
  }
  return {};
}
