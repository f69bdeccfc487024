import { Charging } from '../charging/charging.js';
import { ChargerEventDispatcher } from '../charging/charger-event-dispatcher.js';
import { Drain } from '../charging/drain.js';
import { IdempotencyKeys } from '../charging/idempotency.js';
import { startLocalLists } from '../charging/local-lists/start.js';
import { SessionLifecycle } from '../charging/lifecycle.js';
import { ScreenNotes } from '../charging/screen-notes.js';
import { scaledAllowance } from '../charging/power-allowance.js';
import { listedMinimum, TapPolicies } from '../charging/tap-policy.js';
import { TapDesk } from '../charging/taps.js';
import { IdTokenStore } from '../id-tokens/id-token-store.js';
import type { GatewayConfig } from '../config/schema.js';
import type { SiteDirectory } from '../config/site.js';
import type { TariffBook } from '../config/tariff-book.js';
import type { ConsoleEventHub } from '../console/event-hub.js';
import { consoleFeed, tailOutbox } from '../console/gateway-feed.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import { LiveMeters } from '../operator/live-meters.js';
import type { LoadManager } from '../power/load-manager.js';
import { registerFeedMetrics, type PowerLimits } from '../power/limit-sources.js';
import { PowerListener } from '../power/power-listener.js';
import { startLoadManagement } from '../power/start.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Registry } from 'prom-client';
import type { Records } from './records.js';
import type { Basics } from './store.js';

const DRAIN_POLL_MS = 1000;

export interface PowerDeps {
  config: GatewayConfig;
  site: SiteDirectory;
  records: Records;
  central: CentralSystem;
  clock: Clock;
  log: Logger;
  powerLimits: PowerLimits | undefined;
  registry: Registry;
}

/** The site's power manager, when the config has `power` (without it no profile is ever sent). */
export function buildPower(d: PowerDeps): LoadManager | undefined {
  const { powerLimits } = d;
  if (powerLimits?.feed) registerFeedMetrics(d.registry, powerLimits.feed);
  if (!powerLimits) return undefined;
  return startLoadManagement({
    config: d.config,
    site: d.site,
    sessions: d.records.sessions,
    chargers: d.central.calls,
    log: d.log,
    clock: d.clock,
    limits: powerLimits.board,
    nodeIds: powerLimits.board.nodeIds,
    registry: d.registry,
  });
}

export interface ChargingDeps extends Basics {
  site: SiteDirectory;
  tariffs: TariffBook;
  records: Records;
  central: CentralSystem;
  consoleEvents: ConsoleEventHub;
  load: LoadManager | undefined;
}

/**
 * The session layer, and the one path of charger events: the lifecycle decides, then the live
 * meters, the site's power manager, the console's feed and the chargers' local lists hear it, in
 * that order.
 */
export function buildCharging(d: ChargingDeps) {
  const { config, db, clock, log, central, load } = d;
  const { sessions, outcomes, outbox } = d.records;
  const live = new LiveMeters();
  // The quote mode's figures come from Charging, built below (it needs the lifecycle).
  const quote = { of: (_d: string, _c: string, _k: string): number | null => null };
  const policies = new TapPolicies(config.taps);
  const taps = new TapDesk({
    db,
    clock,
    log: log.child({ component: 'taps' }),
    tokens: new IdTokenStore(db),
    roster: d.records.roster,
    wallet: d.records.wallet,
    sessions,
    site: d.site,
    tariffs: d.tariffs,
    policies,
    maxAmount: config.sessions.maxAmount,
    quote: (driverId, chargerId, connectorId) => quote.of(driverId, chargerId, connectorId),
    unbilledOfflineStart: (subject, detail, at) =>
      d.records.alertStore.raise('operator_loss', subject, detail, at),
  });
  const lifecycle = new SessionLifecycle({
    db,
    clock,
    log: log.child({ component: 'sessions' }),
    sessions,
    outcomes,
    chargers: central.calls,
    startTimeoutMs: config.sessions.startTimeoutSeconds * 1000,
    stopLeadMs: config.sessions.stopLeadMilliseconds,
    stopRetryMs: config.sessions.stopRetrySeconds * 1000,
    stopVerifyMs: config.sessions.stopVerifySeconds * 1000,
    // The interval every charger is asked for (its configure step).
    sampleIntervalMs: () => config.ocpp.meterSampleIntervalSeconds * 1000,
    recoveryWaitMs: config.sessions.recoveryWaitSeconds * 1000,
    stopGraceMs: config.sessions.stopGraceSeconds * 1000,
    silenceMs: config.sessions.settleAfterSilenceSeconds * 1000,
    // A session's connector is configured (Charging checks it); a removed one is not bounded.
    maxPowerW: (chargerId, connectorId) =>
      d.site.connector(chargerId, connectorId)?.maxPowerW ?? Number.POSITIVE_INFINITY,
    ...(load ? { allowance: scaledAllowance(load, config.simulation.timeFactor) } : {}),
    taps,
  });
  const screen = config.screens.enabled
    ? new ScreenNotes({
        sessions,
        balance: (driverId) => d.records.wallet.balance(driverId),
        chargers: central.calls,
        clock,
        log: log.child({ component: 'screens' }),
        runningEveryMs: config.screens.runningCostSeconds * 1000,
      })
    : undefined;
  const localLists = startLocalLists({
    db,
    clock,
    log: log.child({ component: 'local-lists' }),
    chargers: central.calls,
    chargerIds: () => d.site.all().map((c) => c.id),
    settings: config.localLists,
    minimumFor: (fleetId) => listedMinimum(policies.of(fleetId), config.localLists.offlineStarts),
  });
  central.setEvents(
    new ChargerEventDispatcher(
      lifecycle,
      [
        live,
        ...(load ? [new PowerListener(load)] : []),
        consoleFeed(d.consoleEvents, db),
        ...(screen ? [screen] : []),
        // Last: it writes (a reboot wants a full list), and a write that throws stops those after it.
        localLists,
      ],
      screen,
    ),
  );
  tailOutbox(outbox, db, d.consoleEvents);
  const charging = new Charging({
    db,
    clock,
    log: log.child({ component: 'charging' }),
    site: d.site,
    tariffs: d.tariffs,
    wallet: d.records.wallet,
    sessions,
    idempotency: new IdempotencyKeys(db),
    outcomes,
    lifecycle,
    chargers: central.calls,
    settings: {
      maxAmount: config.sessions.maxAmount,
      efficiencyPercent: config.pricing.chargingEfficiencyPercent,
      defaultVehicle: {
        model: config.pricing.defaultVehicle.model,
        batteryWh: Math.round(config.pricing.defaultVehicle.batteryKwh * 1000),
      },
      telematicsMaxAgeMs: config.uplink.telematicsMaxAgeMinutes * 60_000,
    },
  });
  quote.of = (driverId, chargerId, connectorId) =>
    charging.tapQuote(driverId, chargerId, connectorId);
  const drain = new Drain({
    sessions,
    charging,
    clock,
    log: log.child({ component: 'drain' }),
    pollMs: DRAIN_POLL_MS,
  });
  return { live, lifecycle, charging, drain, taps, localLists };
}
