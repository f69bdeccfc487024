import { WHOLE_CHARGER } from '../../connector-state.js';
import type { StatusNotificationReq } from '../messages.js';
import type { Session16 } from '../session-context.js';
import { statusFrom16 } from '../status.js';

export function statusNotification({ ctx, connectorIdOf }: Session16, req: StatusNotificationReq) {
  const errorCode = req.errorCode === 'NoError' ? null : req.errorCode;
  const connectorId = req.connectorId === 0 ? WHOLE_CHARGER : connectorIdOf(req.connectorId);
  if (connectorId) ctx.reports.status(connectorId, statusFrom16(req.status), errorCode);
  else ctx.reports.noted('StatusNotification', 'unconfigured connector', req);
  return {};
}
