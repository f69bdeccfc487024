import { microNgnPerWh } from '../pricing/money.js';
import type { GatewayConfig } from './schema.js';

export interface SiteConnector {
  chargerId: string;
  id: string;
  ocppConnectorId: number;
  tariffId: string;
  microNgnPerWh: number;
}

export interface SiteCharger {
  id: string;
  securityProfile: 1 | 2 | 3;
  /** Absent only for profile 3 (client certificate). */
  passwordHash: string | undefined;
  connectors: ReadonlyMap<string, SiteConnector>;
}

/** The site's chargers and tariffs as configured, indexed for lookups on the hot path. */
export class SiteDirectory {
  private readonly chargers = new Map<string, SiteCharger>();

  constructor(config: GatewayConfig) {
    for (const charger of config.chargers) {
      const connectors = new Map<string, SiteConnector>();
      for (const c of charger.connectors) {
        const tariff = config.tariffs[c.tariff];
        if (!tariff) throw new Error(`unknown tariff ${c.tariff}`);
        connectors.set(c.id, {
          chargerId: charger.id,
          id: c.id,
          ocppConnectorId: c.ocppConnectorId ?? Number(c.id),
          tariffId: c.tariff,
          microNgnPerWh: microNgnPerWh(tariff.pricePerKwh),
        });
      }
      this.chargers.set(charger.id, {
        id: charger.id,
        securityProfile: charger.securityProfile,
        passwordHash: charger.passwordHash,
        connectors,
      });
    }
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
