import { WHOLE_CHARGER } from '../../connector-state.js';
import type { StatusNotificationReq } from '../messages.js';
import type { Session201 } from '../session-context.js';
import { statusFrom201 } from '../status.js';

export function statusNotification({ ctx, connectorIdOf }: Session201, req: StatusNotificationReq) {
  const connectorId = req.evseId === 0 ? WHOLE_CHARGER : connectorIdOf(req.evseId);
  if (connectorId) ctx.reports.status(connectorId, statusFrom201(req.connectorStatus), null);
  else ctx.reports.noted('StatusNotification', 'unconfigured EVSE', req);
  return {};
}
