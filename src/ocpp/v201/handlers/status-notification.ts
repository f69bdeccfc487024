import { WHOLE_CHARGER } from '../../charger-state/connector-state.js';
import type { StatusNotificationReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';
import { statusFrom201, statusWithTransaction } from '../status.js';

export function statusNotification(conn: ConnectionContext201, req: StatusNotificationReq) {
  connectorStatusReported(conn, req.evseId, req.connectorStatus, 'StatusNotification', req);
  return {};
}

/**
 * An EVSE's connector status as the station reported it (EVSE 0: the station itself), whichever
 * message carried it: 2.0.1's StatusNotification, or 2.1's NotifyEvent of AvailabilityState.
 */
export function connectorStatusReported(
  { ctx, txs, connectorIdOf }: ConnectionContext201,
  evseId: number,
  connectorStatus: StatusNotificationReq['connectorStatus'],
  action: string,
  payload: unknown,
): void {
  const connectorId = evseId === 0 ? WHOLE_CHARGER : connectorIdOf(evseId);
  if (!connectorId) {
    ctx.reports.noted(action, 'unconfigured EVSE', payload);
    return;
  }
  const reported = statusFrom201(connectorStatus);
  const status =
    connectorId !== WHOLE_CHARGER && txs.openOn(ctx.chargerId, evseId)
      ? statusWithTransaction(reported, ctx.reports.statusOf(connectorId))
      : reported;
  ctx.reports.status(connectorId, status, null);
}
