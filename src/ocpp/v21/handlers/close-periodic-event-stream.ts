import { recorded } from '../../charger-state/station-notifications.js';

/** A station closing an event stream (none is ever opened: open-periodic-event-stream.ts). */
export const closePeriodicEventStream = recorded('ClosePeriodicEventStream', {});
