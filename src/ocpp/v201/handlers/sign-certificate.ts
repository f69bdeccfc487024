import { recorded } from '../../charger-state/station-notifications.js';

/**
 * A CSR for a new charger certificate: the gateway is no certificate authority (charger keys are
 * made with `fleet-gateway charger-key`, docs/security.md), so it refuses, as the schema allows.
 */
export const signCertificate = recorded(
  'SignCertificate',
  { status: 'Rejected' },
  'no certificate authority: Rejected',
);
