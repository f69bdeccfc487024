import { securityEvent } from '../../charger-state/station-notifications.js';

/** The 1.6 security whitepaper's event: the same fields and handling as 2.0.1's. */
export const securityEventNotification = securityEvent;
