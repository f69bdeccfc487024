import type { SiteDirectory } from '../../config/site.js';
import type { Logger } from '../../shared/log.js';
import { ocppNumber } from '../calls/ocpp-connector.js';
import type { Connections } from '../connection/connections.js';
import type { OcppEventLog } from '../connection/event-log.js';
import type { ChargerSettings } from '../port.js';
import type { AvailabilityHolds } from './availability-holds.js';
import type { ChargerSampling } from './charger-sampling.js';
import { WHOLE_CHARGER } from './connector-state.js';
import type { SettingsPacing } from './settings-pacing.js';

export interface ChargerConfigurationDeps {
  connections: Connections;
  site: SiteDirectory;
  log: Logger;
  settings: ChargerSettings;
  settingsReads: SettingsPacing;
  eventLog: OcppEventLog;
  sampling: ChargerSampling;
  holds: AvailabilityHolds;
}

/**
 * A charger's settings, applied when it boots (paced: settings-pacing.ts) or when asked, and what
 * they came to (sampling verdict, refused names in the event log); then the operator's
 * availability decisions told again, which a reboot may have lost.
 */
export class ChargerConfiguration {
  constructor(private readonly deps: ChargerConfigurationDeps) {}

  /** Applies the settings; returns the names of those the charger did not take. */
  async configure(chargerId: string): Promise<string[]> {
    const { connections, eventLog, sampling } = this.deps;
    const done = await connections.live(chargerId).adapter.configure(this.deps.settings);
    if (done.refused.length > 0) {
      eventLog.record(chargerId, 'configure', `not taken: ${done.refused.join(', ')}`);
    }
    const actions = {
      reset: () => connections.live(chargerId).adapter.operator.reset('soft'),
      note: (note: string) => eventLog.record(chargerId, 'configure', note),
    };
    if (done.samplingGap === null) sampling.held(chargerId, actions);
    else await sampling.notHeld(chargerId, done.samplingGap, done.idle, actions);
    return done.refused;
  }

  /** The charger booted: its settings are read when their turn comes. */
  booted(chargerId: string): void {
    // After the boot reply has gone out: a charger takes no calls before it is accepted.
    setTimeout(() => this.deps.settingsReads.booted(chargerId, () => this.afterBoot(chargerId)), 0);
  }

  /** A booted charger's settings, then the operator's availability decisions told again. */
  private async afterBoot(chargerId: string): Promise<void> {
    if (!this.deps.connections.has(chargerId)) return;
    const step = async (failed: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (err) {
        this.deps.log.warn({ chargerId, err: (err as Error).message }, failed);
      }
    };
    await step('charger configuration not applied', () => this.configure(chargerId));
    await step('operator availability not re-applied', () => this.reapplyAvailability(chargerId));
  }

  /** After a boot: the operator's availability decisions, told again (a reboot may lose them). */
  private async reapplyAvailability(chargerId: string): Promise<void> {
    const { connections, site, eventLog } = this.deps;
    for (const intent of this.deps.holds.of(chargerId)) {
      if (!connections.has(chargerId)) return;
      const connectorId = intent.connectorId === WHOLE_CHARGER ? null : intent.connectorId;
      const number = connectorId === null ? null : ocppNumber(site, chargerId, connectorId);
      const reply = await connections
        .live(chargerId)
        .adapter.operator.setAvailability(number, intent.operative);
      eventLog.record(
        chargerId,
        'ChangeAvailability',
        `operator intent re-applied after boot: ${reply.status}`,
        { connectorId: intent.connectorId, operative: intent.operative },
      );
    }
  }
}
