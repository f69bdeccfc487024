import { securityEvent } from '../../charger-state/station-notifications.js';

export const securityEventNotification = securityEvent;
