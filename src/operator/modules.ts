import type { OperatorRoutes } from './api.js';
import { registerChargerRoutes } from './charger-routes.js';
import { registerChargerAdminRoutes } from './charger-admin-routes.js';
import { registerEnergyRoutes } from './energy-routes.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerMoneyRoutes } from './money-routes.js';
import { registerPowerLimitRoutes } from './power-limit-routes.js';
import { registerReadRoutes } from './read-routes.js';
import { registerRosterRoutes } from './roster-routes.js';
import { registerSiteRoutes } from './site-routes.js';
import { registerSitePowerRoutes } from './site-power-routes.js';
import { registerStopRecordRoutes } from './stop-record-routes.js';
import { registerTariffRoutes } from './tariff-routes.js';
import { registerTransferRoutes } from './transfer-routes.js';

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
