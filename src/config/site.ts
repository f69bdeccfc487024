import type { GatewayConfig } from './schema.js';

export interface SiteConnector {
  chargerId: string;
  id: string;
  ocppConnectorId: number;
  /** Its price is read from the tariff at the moment it is needed (config/tariff-book.ts). */
  tariffId: string;
  /** The connector's rated power, W: the most site power allocation gives it. */
  ratedPowerW: number;
  /**
   * The most power its meter may show, W: the rated power with a margin, times the simulation's
   * time factor (a simulator at factor N delivers N times its power per real second). The
   * plausibility bound on billed energy.
   */
  maxPowerW: number;
  /** AC or DC as configured; null when the config does not say. */
  type: 'AC' | 'DC' | null;
}

/** Per connector type, when `maxPowerKw` is not configured: AC three-phase 32 A; DC HPC. */
const DEFAULT_MAX_POWER_KW = { AC: 22, DC: 400 } as const;
/** Over the rated power: meter tolerance and a charger's brief overshoot are not implausible. */
const POWER_MARGIN = 1.1;

export interface ChargerPassword {
  /** scrypt hash (`fleet-gateway hash-password`) */
  hash: string;
  /** Accepted until then (ms since the epoch); null: no end. Two overlap during a rotation. */
  validUntilMs: number | null;
}

export interface SiteCharger {
  id: string;
  securityProfile: 1 | 2 | 3;
  /** Empty only for profile 3 (client certificate) without a password. */
  passwords: readonly ChargerPassword[];
  connectors: ReadonlyMap<string, SiteConnector>;
}

/** A charger as the config file and the operator API describe it. */
export interface ChargerSpec {
  id: string;
  securityProfile: 1 | 2 | 3;
  passwords: readonly ChargerPassword[];
  connectors: readonly {
    id: string;
    ocppConnectorId?: number | undefined;
    tariff: string;
    type?: 'AC' | 'DC' | undefined;
    maxPowerKw?: number | undefined;
  }[];
}

/** Which tariffs exist (the tariff book; the config file's names when there is none). */
export interface TariffNames {
  has(id: string): boolean;
}

/**
 * The site's chargers, indexed for lookups on the hot path. Built from the config file; chargers
 * added, re-keyed or retired at runtime are set here by the charger registry
 * (config/charger-registry.ts), so a lookup always sees the current state.
 */
export class SiteDirectory {
  private readonly chargers = new Map<string, SiteCharger>();
  private readonly tariffs: TariffNames;
  private readonly timeFactor: number;

  constructor(config: GatewayConfig, tariffs?: TariffNames) {
    this.tariffs = tariffs ?? { has: (id) => Object.hasOwn(config.tariffs, id) };
    this.timeFactor = config.simulation.timeFactor;
    for (const charger of config.chargers) {
      this.set({
        ...charger,
        passwords:
          charger.passwordHash === undefined
            ? []
            : [{ hash: charger.passwordHash, validUntilMs: null }],
      });
    }
  }

  hasTariff(id: string): boolean {
    return this.tariffs.has(id);
  }

  /** Adds or replaces a charger (its connectors' tariffs must exist). */
  set(spec: ChargerSpec): void {
    const connectors = new Map<string, SiteConnector>();
    for (const c of spec.connectors) {
      if (!this.tariffs.has(c.tariff)) throw new Error(`unknown tariff ${c.tariff}`);
      const ratedPowerW = (c.maxPowerKw ?? DEFAULT_MAX_POWER_KW[c.type ?? 'DC']) * 1000;
      connectors.set(c.id, {
        chargerId: spec.id,
        id: c.id,
        ocppConnectorId: c.ocppConnectorId ?? Number(c.id),
        tariffId: c.tariff,
        ratedPowerW,
        maxPowerW: Math.ceil(ratedPowerW * POWER_MARGIN * this.timeFactor),
        type: c.type ?? null,
      });
    }
    this.chargers.set(spec.id, {
      id: spec.id,
      securityProfile: spec.securityProfile,
      passwords: spec.passwords,
      connectors,
    });
  }

  remove(id: string): void {
    this.chargers.delete(id);
  }

  /** Every configured charger, in config order. */
  all(): SiteCharger[] {
    return [...this.chargers.values()];
  }

  charger(id: string): SiteCharger | undefined {
    return this.chargers.get(id);
  }

  connector(chargerId: string, connectorId: string): SiteConnector | undefined {
    return this.chargers.get(chargerId)?.connectors.get(connectorId);
  }

  connectorByOcppId(chargerId: string, ocppConnectorId: number): SiteConnector | undefined {
    const charger = this.chargers.get(chargerId);
    if (!charger) return undefined;
    for (const c of charger.connectors.values())
      if (c.ocppConnectorId === ocppConnectorId) return c;
    return undefined;
  }
}
