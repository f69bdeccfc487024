import { recorded } from '../../charger-state/station-notifications.js';

/** A local controller publishing firmware; the gateway publishes none (PublishFirmware). */
export const publishFirmwareStatusNotification = recorded('PublishFirmwareStatusNotification', {});
