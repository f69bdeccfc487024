import type { StatusNotificationReq } from '../v201/messages.js';

type ConnectorStatus201 = StatusNotificationReq['connectorStatus'];

/** One NotifyEvent eventData, the fields an availability change is read from. */
export interface EventData {
  actualValue: string;
  component: { name: string; evse?: { id: number; connectorId?: number } };
  variable: { name: string };
}

/** What one eventData says of availability: whose (EVSE 0 the station) and which status. */
export type AvailabilityReading =
  { evseId: number; status: ConnectorStatus201; respelled: boolean } | { problem: string };

const STATUSES: readonly ConnectorStatus201[] = [
  'Available',
  'Occupied',
  'Reserved',
  'Unavailable',
  'Faulted',
];
/** The device-model components whose AvailabilityState is a status the gateway keeps. */
const WHOLE_STATION = 'chargingstation';
const PER_EVSE = new Set(['connector', 'evse']);

/**
 * 2.1 lets a station report a connector's status as a NotifyEvent of its device model's
 * AvailabilityState (of a Connector or EVSE, or of the ChargingStation: EVSE 0) instead of a
 * StatusNotification. null: the eventData is about something else. Device-model names compare
 * without case, as OCPP says; a status in another case is read and `respelled` (a deviation).
 */
export function availabilityOf(data: EventData): AvailabilityReading | null {
  if (data.variable.name.toLowerCase() !== 'availabilitystate') return null;
  const component = data.component.name.toLowerCase();
  if (component !== WHOLE_STATION && !PER_EVSE.has(component)) return null;
  const evseId = component === WHOLE_STATION ? 0 : data.component.evse?.id;
  if (evseId === undefined) return { problem: `${data.component.name} without an EVSE` };
  const wanted = data.actualValue.trim().toLowerCase();
  const status = STATUSES.find((s) => s.toLowerCase() === wanted);
  if (!status) return { problem: `unknown AvailabilityState ${data.actualValue}` };
  return { evseId, status, respelled: status !== data.actualValue };
}
