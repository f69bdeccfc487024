import type { SiteDirectory } from '../../config/site.js';
import type { Clock } from '../../shared/clock.js';
import type { AvailabilityHolds } from '../charger-state/availability-holds.js';
import { WHOLE_CHARGER } from '../charger-state/connector-state.js';
import type { Connections } from '../connection/connections.js';
import type {
  ChargerOperations,
  ChargerReply,
  ConfigurationReport,
  FirmwareRequest,
  LogReply,
  LogRequest,
  ResetKind,
  TriggerKind,
} from '../port.js';
import { ocppNumber } from './ocpp-connector.js';

/** Who changed a connector's availability, and why: kept with the intent. */
export interface AvailabilityNote {
  by: string;
  reason: string | null;
}

export interface OperatorChargerCallsDeps {
  connections: Connections;
  site: SiteDirectory;
  clock: Clock;
  holds: AvailabilityHolds;
}

/**
 * The charger port's operations (what an operator makes a charger do): each goes to the
 * adapter of the charger's live connection, with the site's connector ids as the charger's own
 * numbers, and comes back as the charger's own reply.
 */
export class OperatorChargerCalls implements ChargerOperations {
  constructor(private readonly deps: OperatorChargerCallsDeps) {}

  requestStop(chargerId: string, transactionRef: string): Promise<ChargerReply> {
    return this.operator(chargerId).requestStop(transactionRef);
  }

  unlockConnector(chargerId: string, connectorId: string): Promise<ChargerReply> {
    const number = ocppNumber(this.deps.site, chargerId, connectorId);
    return this.operator(chargerId).unlockConnector(number);
  }

  reset(chargerId: string, kind: ResetKind): Promise<ChargerReply> {
    return this.operator(chargerId).reset(kind);
  }

  /**
   * Sends the change; when the charger takes it (Accepted, or Scheduled after its running
   * transaction) the intent is kept with `note` and re-sent whenever the charger boots.
   */
  async setAvailability(
    chargerId: string,
    connectorId: string | null,
    operative: boolean,
    note: AvailabilityNote = { by: 'gateway', reason: null },
  ): Promise<ChargerReply> {
    const number = connectorId === null ? null : ocppNumber(this.deps.site, chargerId, connectorId);
    const reply = await this.operator(chargerId).setAvailability(number, operative);
    if (reply.status === 'Accepted' || reply.status === 'Scheduled') {
      this.deps.holds.record({
        chargerId,
        connectorId: connectorId ?? WHOLE_CHARGER,
        operative,
        reason: note.reason,
        setBy: note.by,
        setAt: new Date(this.deps.clock.now()).toISOString(),
      });
    }
    return reply;
  }

  trigger(chargerId: string, connectorId: string | null, kind: TriggerKind): Promise<ChargerReply> {
    const number = connectorId === null ? null : ocppNumber(this.deps.site, chargerId, connectorId);
    return this.operator(chargerId).trigger(number, kind);
  }

  readConfiguration(chargerId: string, keys: readonly string[]): Promise<ConfigurationReport> {
    return this.operator(chargerId).readConfiguration(keys);
  }

  changeConfiguration(chargerId: string, key: string, value: string): Promise<ChargerReply> {
    return this.operator(chargerId).changeConfiguration(key, value);
  }

  setBasicAuthPassword(chargerId: string, password: string): Promise<ChargerReply> {
    return this.operator(chargerId).setBasicAuthPassword(password);
  }

  updateFirmware(chargerId: string, request: FirmwareRequest): Promise<ChargerReply> {
    return this.operator(chargerId).updateFirmware(request);
  }

  requestLog(chargerId: string, request: LogRequest): Promise<LogReply> {
    return this.operator(chargerId).requestLog(request);
  }

  private operator(chargerId: string) {
    return this.deps.connections.live(chargerId).adapter.operator;
  }
}
