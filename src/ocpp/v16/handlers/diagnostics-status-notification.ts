import { recorded } from './recorded.js';

export const diagnosticsStatusNotification = recorded('DiagnosticsStatusNotification');
