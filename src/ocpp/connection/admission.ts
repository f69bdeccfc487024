import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { SiteCharger } from '../../config/site.js';
import { verifyPassword } from './charger-password.js';

export type Admission =
  /** `credential`: the stored hash the password matched, when the charger has more than one. */
  | { admitted: true; credential?: string }
  | { admitted: false; status: 401 | 404; reason: string; passwordInClear?: boolean };

function isTls(socket: Socket): socket is TLSSocket {
  return (socket as Partial<TLSSocket>).encrypted === true;
}

/**
 * The charger's client certificate, when it chains to the configured CA (the TLS listener verified
 * that) and names this charge point as its subject CN.
 */
function certificateNames(socket: TLSSocket, chargerId: string): boolean {
  if (!socket.authorized) return false;
  const subject = socket.getPeerCertificate().subject as Record<string, unknown> | undefined;
  const cn = subject?.CN;
  // A certificate may carry several CNs (an array): refuse rather than guess which one counts.
  return typeof cn === 'string' && cn === chargerId;
}

/**
 * Decides, before the WebSocket upgrade, whether a connection may speak for `charger`, according
 * to its security profile (OCPP 1.6 security whitepaper / OCPP 2.0.1 part 2 A00):
 * 1: basic auth; 2: TLS and basic auth; 3: TLS with a client certificate for this id (plus the
 * password when one is configured). Reasons go to the log; the charger only sees the status.
 */
export async function admit(
  charger: SiteCharger | undefined,
  password: Buffer | undefined,
  socket: Socket,
  nowMs: number,
): Promise<Admission> {
  if (!charger) return { admitted: false, status: 404, reason: 'unknown charge point' };
  const tls = isTls(socket);
  if (charger.securityProfile >= 2 && !tls) {
    return {
      admitted: false,
      status: 401,
      reason: `security profile ${charger.securityProfile} needs TLS`,
      passwordInClear: password !== undefined,
    };
  }
  if (charger.securityProfile === 3 && !certificateNames(socket as TLSSocket, charger.id)) {
    return {
      admitted: false,
      status: 401,
      reason: 'no valid client certificate for this charge point',
    };
  }
  if (charger.passwords.length > 0) {
    // During a rotation's overlap the old and the new password are both accepted.
    const valid = charger.passwords.filter(
      (p) => p.validUntilMs === null || p.validUntilMs > nowMs,
    );
    let matched: string | undefined;
    for (const p of valid) {
      if (password && (await verifyPassword(password, p.hash))) {
        matched = p.hash;
        break;
      }
    }
    if (matched === undefined) return { admitted: false, status: 401, reason: 'bad credentials' };
    if (valid.length > 1) return { admitted: true, credential: matched };
  }
  return { admitted: true };
}
