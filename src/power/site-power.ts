import type { GatewayConfig, PowerConfig } from '../config/schema.js';
import type { SiteDirectory } from '../config/site.js';
import { deliveredWh } from '../charging/meter-track.js';
import { trackOf, type SessionStore } from '../charging/session-store.js';
import { allCircuits, ConfigLimits, limitWatts, SITE_NODE } from './limits.js';
import type { ActiveSession, ManagedConnector } from './power-model.js';

/** IEC 61851: an AC charger cannot signal less than 6 A to the EV. */
const AC_MIN_CURRENT_A = 6;

/** Each connector's node path: the circuit it is wired to and every circuit above, from 'site'. */
export function connectorPaths(power: PowerConfig): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  const walk = (circuits: PowerConfig['circuits'], above: string[]): void => {
    for (const c of circuits) {
      const path = [...above, c.id];
      for (const ref of c.connectors) paths.set(ref, path);
      walk(c.circuits, path);
    }
  };
  walk(power.circuits, [SITE_NODE]);
  return paths;
}

/**
 * Every connector of the site under load management: the config file's connectors with their
 * min/max, and connectors of chargers added at run time (operator API) under the site with their
 * type's defaults. A connector no circuit names sits directly under the site.
 */
export function managedConnectors(
  config: GatewayConfig,
  power: PowerConfig,
  site: SiteDirectory,
): () => ManagedConnector[] {
  const paths = connectorPaths(power);
  const configured = new Map<string, GatewayConfig['chargers'][number]['connectors'][number]>(
    config.chargers.flatMap((ch) => ch.connectors.map((c) => [`${ch.id}/${c.id}`, c] as const)),
  );
  return () =>
    site.all().flatMap((charger) =>
      [...charger.connectors.values()].map((sc): ManagedConnector => {
        const ref = `${charger.id}/${sc.id}`;
        const c = configured.get(ref);
        const type = c?.type ?? 'DC';
        const phases = c?.phases ?? (type === 'AC' ? power.phases : undefined);
        const volts = power.voltage;
        const rated = sc.ratedPowerW;
        const byCurrent =
          c?.maxCurrentA !== undefined ? c.maxCurrentA * (phases ?? 3) * volts : Infinity;
        const maxW = Math.floor(Math.min(rated, byCurrent));
        const minW =
          c?.minPowerKw !== undefined
            ? Math.round(c.minPowerKw * 1000)
            : type === 'AC'
              ? AC_MIN_CURRENT_A * (phases ?? 3) * volts
              : 0;
        return {
          chargerId: charger.id,
          connectorId: sc.id,
          path: paths.get(ref) ?? [SITE_NODE],
          minW: Math.min(minW, maxW),
          maxW,
          phases: type === 'AC' ? phases : undefined,
        };
      }),
    );
}

/** What the config allows but an operator would want to hear of, logged at start. */
export function powerConfigWarnings(config: GatewayConfig, power: PowerConfig): string[] {
  const warnings: string[] = [];
  const limits = new ConfigLimits(power);
  const check = (parentId: string, circuits: PowerConfig['circuits']): void => {
    for (const c of circuits) {
      if (limitWatts(c, power) > limits.limit(parentId).watts) {
        warnings.push(`circuit ${c.id} has a higher limit than ${parentId} above it`);
      }
      check(c.id, c.circuits);
    }
  };
  check(SITE_NODE, power.circuits);
  const known = new Set(
    config.chargers.flatMap((ch) => ch.connectors.map((c) => `${ch.id}/${c.id}`)),
  );
  for (const c of allCircuits(power.circuits)) {
    for (const ref of c.connectors) {
      if (!known.has(ref)) {
        warnings.push(`circuit ${c.id} names ${ref}, which is not a connector in the config file`);
      }
    }
  }
  return warnings;
}

/** The sessions drawing power now (charging, or stopping until the charger ends them). */
export function activeSessions(sessions: SessionStore): () => ActiveSession[] {
  return () =>
    sessions.allOpen().flatMap((s) =>
      (s.state === 'charging' || s.state === 'stopping') && s.transactionRef !== null
        ? [
            {
              sessionId: s.id,
              chargerId: s.chargerId,
              connectorId: s.connectorId,
              transactionRef: s.transactionRef,
              owedWh: Math.max(
                0,
                s.limitWh - (s.meterStartWh === null ? 0 : deliveredWh(trackOf(s))),
              ),
              startedAtMs: Date.parse(s.createdAt),
            },
          ]
        : [],
    );
}
