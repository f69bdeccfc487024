import type { OperatorRoutes } from './api.js';
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerChargerCommands } from './routes/charger-commands.js';
import { registerChargerRegistry } from './routes/charger-registry.js';
import { registerChargerReads } from './routes/chargers.js';
import { registerDriverReads, registerDriverWrites } from './routes/drivers.js';
import { registerTokenReads, registerTokenWrites } from './routes/driver-tokens.js';
import { registerEnergyRoutes } from './routes/energy.js';
import { registerCsvExports } from './routes/exports.js';
import { registerFleetReads, registerFleetWrites } from './routes/fleets.js';
import { registerLedgerRead, registerLossesRead, registerMoneyRoutes } from './routes/money.js';
import { registerOperatorList, registerWhoamiAndAudit } from './routes/operators.js';
import { registerPowerLimitRoutes } from './routes/power-limits.js';
import { registerSessionReads } from './routes/sessions.js';
import { registerHealthRoutes, registerSiteStatus } from './routes/site.js';
import { registerSitePowerRoutes } from './routes/site-power.js';
import { registerStopRecordRoutes } from './routes/stop-records.js';
import { registerTariffRoutes } from './routes/tariffs.js';
import { registerTransferRoutes } from './routes/transfers.js';
import { registerUplinkRoutes } from './routes/uplink.js';

/**
 * Every module of the operator API, in registration order. A new module (charger actions, …) is
 * one line here: it gets authentication, roles and the audit trail from registerOperatorApi.
 * The order is also the order of the paths in the OpenAPI document (docs/openapi.json, checked by
 * test/openapi.test.ts), which is why a resource's reads and writes may sit apart in this list.
 */
export const operatorRouteModules: readonly OperatorRoutes[] = [
  registerWhoamiAndAudit,
  registerSitePowerRoutes,
  registerSiteStatus,
  registerChargerReads,
  registerSessionReads,
  registerFleetReads,
  registerDriverReads,
  registerTokenReads,
  registerLedgerRead,
  registerUplinkRoutes,
  registerLossesRead,
  registerOperatorList,
  registerCsvExports,
  registerMoneyRoutes,
  registerFleetWrites,
  registerDriverWrites,
  registerTokenWrites,
  registerApiKeyRoutes,
  registerChargerCommands,
  registerChargerRegistry,
  registerStopRecordRoutes,
  registerEnergyRoutes,
  registerPowerLimitRoutes,
  registerTariffRoutes,
  registerTransferRoutes,
  registerHealthRoutes,
];
