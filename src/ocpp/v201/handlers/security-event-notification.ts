import { recorded } from './recorded.js';

export const securityEventNotification = recorded('SecurityEventNotification');
