import { recorded } from '../../charger-state/station-notifications.js';

/** An OCSP check for an ISO 15118 certificate: the gateway has no OCSP responder, so Failed. */
export const getCertificateStatus = recorded(
  'GetCertificateStatus',
  { status: 'Failed' },
  'no OCSP responder: Failed',
);
