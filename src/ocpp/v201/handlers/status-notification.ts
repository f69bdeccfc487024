import { WHOLE_CHARGER } from '../../charger-state/connector-state.js';
import type { StatusNotificationReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';
import { statusFrom201, statusWithTransaction } from '../status.js';

export function statusNotification(
  { ctx, txs, connectorIdOf }: ConnectionContext201,
  req: StatusNotificationReq,
) {
  const connectorId = req.evseId === 0 ? WHOLE_CHARGER : connectorIdOf(req.evseId);
  if (!connectorId) {
    ctx.reports.noted('StatusNotification', 'unconfigured EVSE', req);
    return {};
  }
  const reported = statusFrom201(req.connectorStatus);
  const status =
    connectorId !== WHOLE_CHARGER && txs.openOn(ctx.chargerId, req.evseId)
      ? statusWithTransaction(reported, ctx.reports.statusOf(connectorId))
      : reported;
  ctx.reports.status(connectorId, status, null);
  return {};
}
