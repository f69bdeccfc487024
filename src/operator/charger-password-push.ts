import { ApiError } from '../api/errors.js';
import type { ChargerRegistry } from '../config/charger-registry.js';
import { hashPassword } from '../ocpp/connection/charger-password.js';
import type { ChargerCommands } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { ChargerActions } from './charger-actions.js';

export interface PasswordPushAnswer {
  /** The charger's own status word (`CallError` for a CALLERROR). */
  status: string;
  accepted: boolean;
}

export interface PasswordPushDeps {
  clock: Clock;
  chargers: Pick<ChargerCommands, 'isOnline'>;
  chargerActions: Pick<ChargerActions, 'setBasicAuthPassword'>;
  chargerRegistry: Pick<ChargerRegistry, 'addPushedPassword' | 'pushAnswered'>;
}

/**
 * A new password set on the charger over OCPP (docs/security.md, "Charger passwords"). It is
 * accepted from before the call goes out, so a charger that takes it and reconnects at once is
 * admitted. Taken: the old ones end after the overlap, or when the charger connects with the new
 * one. Refused or never sent: the new one ends and the old ones stay as they were. Unanswered: the
 * charger may have taken it, so both stay until it connects with the new one. Never queued or
 * retried: the gateway keeps only the password's hash, so the operator pushes again.
 */
export async function pushChargerPassword(
  deps: PasswordPushDeps,
  chargerId: string,
  password: string,
  overlapMs: number,
): Promise<PasswordPushAnswer & { previousPasswordsEndAt: string | null }> {
  if (!deps.chargers.isOnline(chargerId)) {
    throw new ApiError(
      'charger_offline',
      `charger ${chargerId} is not connected; its password was left as it was`,
    );
  }
  const hash = hashPassword(password);
  deps.chargerRegistry.addPushedPassword(chargerId, hash, deps.clock.now());
  const answered = (answer: 'taken' | 'refused' | 'unanswered') =>
    deps.chargerRegistry.pushAnswered(chargerId, hash, answer, overlapMs, deps.clock.now());
  let reply: PasswordPushAnswer;
  try {
    reply = await deps.chargerActions.setBasicAuthPassword(chargerId, password);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'charger_timeout') {
      answered('unanswered');
      throw new ApiError(
        'charger_timeout',
        `charger ${chargerId} did not answer and may have taken the new password: the old and the new one both stay valid until it connects with the new one`,
      );
    }
    answered('refused');
    throw err;
  }
  const previousPasswordsEndAt = answered(reply.accepted ? 'taken' : 'refused');
  return { status: reply.status, accepted: reply.accepted, previousPasswordsEndAt };
}
