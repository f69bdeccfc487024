import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { TlsMaterial } from './tls-files.js';

/**
 * The suites every TLS listener offers (docs/security.md, "TLS"). OCPP 2.0.1 A00.FR.318 has a CSMS
 * support the ECDHE-ECDSA and the RSA key-exchange AES-GCM suites, since a charger may offer only
 * one pair (A00.FR.319/320); ECDHE-RSA comes before plain RSA for forward secrecy with an RSA
 * certificate, and TLS 1.3 stays on. No CBC, no DHE.
 */
export const SERVER_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
].join(':');

/**
 * A TLS server's options: every certificate side by side (OpenSSL serves the one whose key type
 * fits the suite it picks), the cipher list above in the server's order, TLS 1.2 at least.
 */
export function serverTlsOptions(material: TlsMaterial): SecureContextOptions & TlsOptions {
  return {
    ...material,
    ciphers: SERVER_CIPHERS,
    honorCipherOrder: true,
    minVersion: 'TLSv1.2',
  };
}
