import { recorded } from './recorded.js';

export const reservationStatusUpdate = recorded('ReservationStatusUpdate');
