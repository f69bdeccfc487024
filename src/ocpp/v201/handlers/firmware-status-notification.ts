import { recorded } from './recorded.js';

export const firmwareStatusNotification = recorded('FirmwareStatusNotification');
