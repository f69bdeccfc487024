import { recorded } from '../../charger-state/station-notifications.js';

export const reservationStatusUpdate = recorded('ReservationStatusUpdate', {});
