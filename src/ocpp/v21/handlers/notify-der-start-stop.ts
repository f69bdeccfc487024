import { recorded } from '../../charger-state/station-notifications.js';

/** A DER control started or stopped on the station; the gateway sets none, so it is kept only. */
export const notifyDERStartStop = recorded('NotifyDERStartStop', {});
