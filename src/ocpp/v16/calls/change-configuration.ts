import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import { UnsayableCommandError, type ChargerReply } from '../../port.js';

/** ChangeConfiguration with the charger's own reply: Accepted, Rejected, RebootRequired or NotSupported. */
export function sendChangeConfiguration(
  target: CallTarget,
  key: string,
  value: string,
): Promise<ChargerReply> {
  return callForReply(target, 'ChangeConfiguration', { key, value });
}

/** The charger took the setting, now or after a reboot. */
export const settingTaken = (reply: ChargerReply): boolean =>
  reply.status === 'Accepted' || reply.status === 'RebootRequired';

const AUTHORIZATION_KEY_MAX_BYTES = 20;

/**
 * AuthorizationKey carries the password's bytes hex-encoded, and the charger sends those bytes in
 * basic auth (1.6 security whitepaper; OCTT TC_085_CS, steve-community/steve#1895): at most 20 of
 * them, 40 hex digits.
 */
export function sendAuthorizationKey(target: CallTarget, password: string): Promise<ChargerReply> {
  const bytes = Buffer.from(password, 'utf8');
  if (bytes.length > AUTHORIZATION_KEY_MAX_BYTES) {
    return Promise.reject(
      new UnsayableCommandError(
        `an OCPP 1.6 AuthorizationKey holds at most ${AUTHORIZATION_KEY_MAX_BYTES} bytes; this password has ${bytes.length}`,
      ),
    );
  }
  return sendChangeConfiguration(target, 'AuthorizationKey', bytes.toString('hex'));
}
