import type { OperatorRoutes } from './api.js';
import { registerChargerRoutes } from './routes/charger-commands.js';
import { registerChargerAdminRoutes } from './routes/charger-registry.js';
import { registerEnergyRoutes } from './routes/energy.js';
import { registerHealthRoutes } from './routes/site.js';
import { registerMoneyRoutes } from './routes/money.js';
import { registerPowerLimitRoutes } from './routes/power-limits.js';
import { registerReadRoutes } from './routes/read-routes.js';
import { registerRosterRoutes } from './routes/fleets.js';
import { registerSiteRoutes } from './routes/operators.js';
import { registerSitePowerRoutes } from './routes/site-power.js';
import { registerStopRecordRoutes } from './routes/stop-records.js';
import { registerTariffRoutes } from './routes/tariffs.js';
import { registerTransferRoutes } from './routes/transfers.js';

/**
 * Every module of the operator API, in registration order. A new module (charger actions, …) is
 * one line here: it gets authentication, roles and the audit trail from registerOperatorApi.
 */
export const operatorRouteModules: readonly OperatorRoutes[] = [
  registerSiteRoutes,
  registerSitePowerRoutes,
  registerReadRoutes,
  registerMoneyRoutes,
  registerRosterRoutes,
  registerChargerRoutes,
  registerChargerAdminRoutes,
  registerStopRecordRoutes,
  registerEnergyRoutes,
  registerPowerLimitRoutes,
  registerTariffRoutes,
  registerTransferRoutes,
  registerHealthRoutes,
];
