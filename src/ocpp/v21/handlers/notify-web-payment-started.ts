import { recorded } from '../../charger-state/station-notifications.js';

/**
 * A driver opened the station's own ad hoc web payment (its QR code): that payment is between the
 * driver and the station's payment provider; the gateway's drivers pay from their wallets. Kept.
 */
export const notifyWebPaymentStarted = recorded('NotifyWebPaymentStarted', {});
