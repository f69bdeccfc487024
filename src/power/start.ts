import { Counter, Gauge, type Registry } from 'prom-client';
import type { SessionStore } from '../charging/session-store.js';
import type { GatewayConfig } from '../config/schema.js';
import type { SiteDirectory } from '../config/site.js';
import type { ChargerCommands } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { LimitReader } from './limits.js';
import { LoadManager } from './load-manager.js';
import { activeSessions, managedConnectors, powerConfigWarnings } from './site-power.js';

export interface LoadManagementDeps {
  config: GatewayConfig;
  site: SiteDirectory;
  sessions: SessionStore;
  chargers: Pick<ChargerCommands, 'isOnline' | 'setPowerLimit'>;
  log: Logger;
  clock: Clock;
  /** The run-time limits (load-inputs' board), or the config's own. */
  limits: LimitReader;
  nodeIds: readonly string[];
  registry: Registry;
}

/** The load manager for a config with `power`; undefined without it (no profile is ever sent). */
export function startLoadManagement(d: LoadManagementDeps): LoadManager | undefined {
  const power = d.config.power;
  if (!power) return undefined;
  const log = d.log.child({ component: 'load' });
  for (const warning of powerConfigWarnings(d.config, power)) log.warn({ warning }, 'power config');
  const registers = [d.registry];
  const reallocations = new Counter({
    name: 'fleetgw_reallocations_total',
    help: 'Power reallocations, by what started them',
    labelNames: ['reason'],
    registers,
  });
  const refusals = new Counter({
    name: 'fleetgw_profile_refusals_total',
    help: 'Chargers found refusing (or drawing past) a charging profile: counted at their maximum',
    registers,
  });
  const manager = new LoadManager({
    log,
    limits: d.limits,
    nodeIds: d.nodeIds,
    policy: power.policy,
    connectors: managedConnectors(d.config, power, d.site),
    active: activeSessions(d.sessions),
    chargers: d.chargers,
    now: () => d.clock.now(),
    counters: {
      reallocation: (reason) => reallocations.inc({ reason }),
      refusal: () => refusals.inc(),
    },
  });
  const nodeGauge = (name: string, help: string, read: 'watts' | 'measuredW') =>
    new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const node of manager.view().nodes) this.set({ node: node.nodeId }, node[read]);
      },
    });
  nodeGauge(
    'fleetgw_site_power_limit_watts',
    'Effective power limit of each node (site, circuits)',
    'watts',
  );
  nodeGauge(
    'fleetgw_site_power_measured_watts',
    'Sum of the latest live power readings of the connectors on each node',
    'measuredW',
  );
  new Gauge({
    name: 'fleetgw_session_power_allocated_watts',
    help: 'Power allocated to each session drawing now (0 while it waits)',
    labelNames: ['session', 'charger', 'connector'],
    registers,
    collect() {
      this.reset();
      for (const s of manager.view().sessions) {
        this.set(
          { session: s.sessionId, charger: s.chargerId, connector: s.connectorId },
          s.allocatedW,
        );
      }
    },
  });
  manager.start();
  return manager;
}
