import { recorded } from '../../charger-state/station-notifications.js';

/**
 * The 1.6 security whitepaper's CSR for a new charger certificate: the gateway is no certificate
 * authority (charger keys: `fleet-gateway charger-key`, docs/security.md), so Rejected.
 */
export const signCertificate = recorded(
  'SignCertificate',
  { status: 'Rejected' },
  'no certificate authority: Rejected',
);
