import type { ChargerEvents } from './port.js';

/** What a tap hears: the port's notifications (the ones that answer nothing). */
export type ChargerEventTaps = Partial<
  Pick<
    ChargerEvents,
    'meterSample' | 'transactionEnded' | 'chargerOnline' | 'chargerBooted' | 'connectorStatus'
  >
>;

/**
 * The charger port's events passed on unchanged to `events` (which answers), each notification
 * then also told to `taps`: how observers (live meters, the console's feed) see the chargers
 * without standing between them and the session layer.
 */
export function tapChargerEvents(events: ChargerEvents, taps: ChargerEventTaps): ChargerEvents {
  return {
    authorize: (chargerId, idToken, connectorId) =>
      events.authorize(chargerId, idToken, connectorId),
    transactionStarted: (event) => events.transactionStarted(event),
    meterSample: (sample) => {
      events.meterSample(sample);
      taps.meterSample?.(sample);
    },
    transactionEnded: (event) => {
      events.transactionEnded(event);
      taps.transactionEnded?.(event);
    },
    chargerOnline: (chargerId) => {
      events.chargerOnline(chargerId);
      taps.chargerOnline?.(chargerId);
    },
    chargerBooted: (chargerId) => {
      events.chargerBooted(chargerId);
      taps.chargerBooted?.(chargerId);
    },
    connectorStatus: (chargerId, connectorId, status, transactionless) => {
      events.connectorStatus(chargerId, connectorId, status, transactionless);
      taps.connectorStatus?.(chargerId, connectorId, status, transactionless);
    },
  };
}
