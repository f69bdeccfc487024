import { recorded } from '../../charger-state/station-notifications.js';

/** An ISO 15118 contract certificate for the EV: the gateway has no PKI to ask, so Failed. */
export const get15118EVCertificate = recorded(
  'Get15118EVCertificate',
  { status: 'Failed', exiResponse: '' },
  'no ISO 15118 PKI: Failed',
);
