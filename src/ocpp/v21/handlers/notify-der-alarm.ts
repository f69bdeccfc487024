import type { ConnectionContext201 } from '../../v201/connection-context.js';

interface NotifyDERAlarmReq {
  controlType: string;
  gridEventFault?: string;
  alarmEnded?: boolean;
  timestamp: string;
}

/**
 * A grid alarm from a station's DER (distributed energy resource) control: the gateway sets no
 * DER controls, but a grid fault at a site is worth a log line of its own besides the record.
 */
export function notifyDERAlarm({ ctx }: ConnectionContext201, req: NotifyDERAlarmReq) {
  const ended = req.alarmEnded === true;
  ctx.log.warn(
    { chargerId: ctx.chargerId, controlType: req.controlType, fault: req.gridEventFault, ended },
    'charger DER alarm',
  );
  ctx.reports.noted('NotifyDERAlarm', `${req.controlType}${ended ? ' ended' : ''}`, req);
  return {};
}
