/** What an alert is, for the gateway, its receivers and the console (no dependencies). */
export const ALERT_KINDS = [
  'charger_offline',
  'charger_faulted',
  'stop_escalated',
  'operator_loss',
  'outbox_backlog',
  'disk_space',
  'certificate_expiry',
  'station_payment',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface Alert {
  id: string;
  kind: AlertKind;
  subject: string;
  raisedAt: string;
  clearedAt: string | null;
  detail: Record<string, unknown>;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
}

export type AlertEventType = 'alert.raised' | 'alert.cleared' | 'alert.test';

/** What a receiver gets, by webhook and on the MQTT alert topic: `id` is stable per event. */
export interface AlertEvent {
  id: string;
  type: 'alert.raised' | 'alert.cleared';
  siteId: string;
  at: string;
  alert: Alert;
}

/** An operator's test of the webhook: sent by it only, through the same queue, signed the same. */
export interface AlertTestEvent {
  id: string;
  type: 'alert.test';
  siteId: string;
  at: string;
  requestedBy: string;
}
