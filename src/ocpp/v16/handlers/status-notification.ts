import { WHOLE_CHARGER } from '../../charger-state/connector-state.js';
import type { StatusNotificationReq } from '../messages.js';
import type { ConnectionContext16 } from '../connection-context.js';
import { statusFrom16 } from '../status.js';

export function statusNotification(
  { ctx, connectorIdOf }: ConnectionContext16,
  req: StatusNotificationReq,
) {
  const errorCode = req.errorCode === 'NoError' ? null : req.errorCode;
  const connectorId = req.connectorId === 0 ? WHOLE_CHARGER : connectorIdOf(req.connectorId);
  // Preparing: plugged in (or badged), "no ongoing transaction (yet)" in the spec's words.
  if (connectorId)
    ctx.reports.status(
      connectorId,
      statusFrom16(req.status),
      errorCode,
      req.status === 'Preparing',
    );
  else ctx.reports.noted('StatusNotification', 'unconfigured connector', req);
  return {};
}
