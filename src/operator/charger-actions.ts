import { ApiError } from '../api/errors.js';
import type { SessionLifecycle } from '../charging/lifecycle.js';
import type { SiteDirectory } from '../config/site.js';
import type { AvailabilityNote } from '../ocpp/calls/operator-charger-calls.js';
import {
  ChargerOfflineError,
  ChargerTimeoutError,
  UnsayableCommandError,
  type ChargerOperations,
  type ChargerReply,
  type ConfigurationReport,
  type ResetKind,
  type TriggerKind,
} from '../ocpp/port.js';

/** The charger's answer to an operator's command, as the API returns it. */
export interface ActionAnswer {
  chargerId: string;
  connectorId: string | null;
  /** The charger's own status word (`CallError` for a CALLERROR). */
  status: string;
  /** Whether the charger took the command (now, or scheduled after its running transaction). */
  accepted: boolean;
  /** The charger's whole reply. */
  reply: unknown;
}

export interface SessionStopAnswer extends ActionAnswer {
  sessionId: string;
  /** The session's state after the command; it settles when the charger reports the end. */
  sessionState: 'stopping';
  /** True when the charger did not take the stop: the gateway keeps sending it. */
  retrying: boolean;
}

export interface ConfigurationAnswer {
  chargerId: string;
  entries: ConfigurationReport['entries'];
  unknownKeys: string[];
  reply: unknown;
}

/** Statuses meaning the charger took the command, across both protocols' replies. */
const TAKEN = new Set(['Accepted', 'Scheduled', 'Unlocked', 'RebootRequired']);

export interface ChargerActionsDeps {
  site: SiteDirectory;
  chargers: ChargerOperations & {
    setAvailability(
      chargerId: string,
      connectorId: string | null,
      operative: boolean,
      note?: AvailabilityNote,
    ): Promise<ChargerReply>;
  };
  lifecycle: Pick<SessionLifecycle, 'beginOperatorStop' | 'keepStopping'>;
  /** Configuration names an operator may change (charger-config-keys.ts). */
  writableConfig: readonly string[];
}

/**
 * What an operator can make a charger do, version-neutral: resolves the ids, sends the command
 * through the charger port, and turns "offline" and "no answer" into the API's errors. Nothing is
 * queued: an offline charger is 503 charger_offline, an unanswered command 504 charger_timeout.
 */
export class ChargerActions {
  private readonly writable: { exact: Set<string>; folded: Set<string> };

  constructor(private readonly deps: ChargerActionsDeps) {
    // 1.6 keys are matched case-insensitively (chargers differ), 2.0.1 names exactly.
    this.writable = {
      exact: new Set(deps.writableConfig.filter((k) => k.includes('.'))),
      folded: new Set(deps.writableConfig.filter((k) => !k.includes('.')).map(fold)),
    };
  }

  unlockConnector(chargerId: string, connectorId: string): Promise<ActionAnswer> {
    this.connector(chargerId, connectorId);
    return this.answer(chargerId, connectorId, () =>
      this.deps.chargers.unlockConnector(chargerId, connectorId),
    );
  }

  reset(chargerId: string, kind: ResetKind): Promise<ActionAnswer> {
    this.charger(chargerId);
    return this.answer(chargerId, null, () => this.deps.chargers.reset(chargerId, kind));
  }

  setAvailability(
    chargerId: string,
    connectorId: string | null,
    operative: boolean,
    note: AvailabilityNote,
  ): Promise<ActionAnswer> {
    if (connectorId === null) this.charger(chargerId);
    else this.connector(chargerId, connectorId);
    return this.answer(chargerId, connectorId, () =>
      this.deps.chargers.setAvailability(chargerId, connectorId, operative, note),
    );
  }

  trigger(chargerId: string, connectorId: string | null, kind: TriggerKind): Promise<ActionAnswer> {
    if (connectorId === null) this.charger(chargerId);
    else this.connector(chargerId, connectorId);
    return this.answer(chargerId, connectorId, () =>
      this.deps.chargers.trigger(chargerId, connectorId, kind),
    );
  }

  async readConfiguration(
    chargerId: string,
    keys: readonly string[],
  ): Promise<ConfigurationAnswer> {
    this.charger(chargerId);
    const report = await this.delivered(chargerId, () =>
      this.deps.chargers.readConfiguration(chargerId, keys),
    );
    return {
      chargerId,
      entries: report.entries,
      unknownKeys: report.unknownKeys,
      reply: report.raw,
    };
  }

  changeConfiguration(chargerId: string, name: string, value: string): Promise<ActionAnswer> {
    this.charger(chargerId);
    if (!this.isWritable(name)) {
      throw new ApiError(
        'config_key_not_allowed',
        `${name} is not on this site's list of charger settings an operator may change (chargerOperations.writableConfig)`,
      );
    }
    return this.answer(chargerId, null, () =>
      this.deps.chargers.changeConfiguration(chargerId, name, value),
    );
  }

  /** Sets the password the charger sends in basic auth (charger-password-push.ts). */
  setBasicAuthPassword(chargerId: string, password: string): Promise<ActionAnswer> {
    this.charger(chargerId);
    return this.answer(chargerId, null, () =>
      this.deps.chargers.setBasicAuthPassword(chargerId, password),
    );
  }

  /**
   * Stops a session through the charging layer, so it settles as any other: it becomes stopping,
   * the first stop goes out now with the charger's reply in the answer, and a stop the charger
   * refused or left unanswered is sent again by the session's stop loop until the charger takes it.
   */
  async stopSession(
    sessionId: string,
    operator: { id: string; name: string },
  ): Promise<SessionStopAnswer> {
    const begun = this.deps.lifecycle.beginOperatorStop(sessionId, operator);
    if (begun.kind === 'not_found') {
      throw new ApiError('session_not_found', `no session with id ${sessionId}`);
    }
    if (begun.kind === 'not_stoppable') {
      throw new ApiError(
        'session_not_stoppable',
        `session ${sessionId} is ${begun.session.state}: only a charging session can be stopped`,
      );
    }
    if (begun.kind === 'offline') {
      throw new ApiError(
        'charger_offline',
        `charger ${begun.chargerId} is not connected; the session was left as it was and nothing was queued`,
      );
    }
    const base = {
      sessionId,
      sessionState: 'stopping' as const,
      chargerId: begun.chargerId,
      connectorId: null,
    };
    try {
      const reply = await this.deps.chargers.requestStop(begun.chargerId, begun.transactionRef);
      const accepted = reply.status === 'Accepted';
      if (!accepted) this.deps.lifecycle.keepStopping(sessionId);
      return { ...base, status: reply.status, accepted, reply: reply.raw, retrying: !accepted };
    } catch (err) {
      // The session is stopping whatever happened to this attempt: the loop keeps at it.
      this.deps.lifecycle.keepStopping(sessionId);
      if (err instanceof ChargerTimeoutError || err instanceof ChargerOfflineError) {
        throw new ApiError(
          err instanceof ChargerTimeoutError ? 'charger_timeout' : 'charger_offline',
          `charger ${begun.chargerId} did not take the stop now; session ${sessionId} is stopping and the gateway keeps sending the stop`,
        );
      }
      throw err;
    }
  }

  private isWritable(name: string): boolean {
    return name.includes('.')
      ? this.writable.exact.has(name)
      : this.writable.folded.has(fold(name));
  }

  private async answer(
    chargerId: string,
    connectorId: string | null,
    send: () => Promise<ChargerReply>,
  ): Promise<ActionAnswer> {
    const reply = await this.delivered(chargerId, send);
    return {
      chargerId,
      connectorId,
      status: reply.status,
      accepted: TAKEN.has(reply.status),
      reply: reply.raw,
    };
  }

  private async delivered<T>(chargerId: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      throw translate(err, chargerId);
    }
  }

  private charger(chargerId: string): void {
    if (!this.deps.site.charger(chargerId)) {
      throw new ApiError('charger_not_found', `no charger with id ${chargerId}`);
    }
  }

  private connector(chargerId: string, connectorId: string): void {
    this.charger(chargerId);
    if (!this.deps.site.connector(chargerId, connectorId)) {
      throw new ApiError(
        'connector_not_found',
        `charger ${chargerId} has no connector ${connectorId}`,
      );
    }
  }
}

function fold(key: string): string {
  return key.toLowerCase();
}

function translate(err: unknown, chargerId: string): unknown {
  if (err instanceof ChargerOfflineError) {
    return new ApiError(
      'charger_offline',
      `charger ${chargerId} is not connected; nothing was sent or queued`,
    );
  }
  if (err instanceof ChargerTimeoutError) {
    return new ApiError(
      'charger_timeout',
      `charger ${chargerId} did not answer in time; it may still act on the command`,
    );
  }
  if (err instanceof UnsayableCommandError) {
    return new ApiError('invalid_request', `${err.message}; nothing was sent`);
  }
  return err;
}
