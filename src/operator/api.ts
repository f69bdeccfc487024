import type { FastifyInstance } from 'fastify';
import type { ApiKeys } from '../auth/api-keys.js';
import type { ConsoleLogins } from '../auth/console-logins.js';
import type { OperatorCredentials } from '../auth/operator-credentials.js';
import { sendError } from '../api/errors.js';
import { collectOpenApi } from '../api/openapi.js';
import { createJsonServer } from '../api/server.js';
import type { FleetChanges } from '../fleet/fleet-changes.js';
import type { TokenChanges } from '../fleet/token-changes.js';
import type { Roster } from '../fleet/roster.js';
import type { ChargerRegistry } from '../config/charger-registry.js';
import type { SiteDirectory } from '../config/site.js';
import type { TariffBook } from '../config/tariff-book.js';
import type { ChargerCommands } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { PowerLimits } from '../power/limit-sources.js';
import type { AllocationPolicy } from '../power/allocator.js';
import type { LoadManager } from '../power/load-manager.js';
import type { Logger } from '../shared/log.js';
import type { TlsMaterial } from '../shared/tls-files.js';
import type { Db } from '../store/database.js';
import type { Transfers } from '../transfers/transfers.js';
import type { Wallet } from '../wallet/wallet.js';
import { maskTokenFields, type AuditTrail } from './audit.js';
import type { ChargerActions } from './charger-actions.js';
import { authenticate } from './guard.js';
import type { LiveMeters } from './live-meters.js';
import type { RecentCalls } from './recent-calls.js';
import type { SiteReadModel } from './read-model/site.js';
import type { OperatorRequests } from './requests.js';

/** Where the operator API lives: every route a module registers is under it. */
export const OPERATOR_PREFIX = '/admin/v1';

/** What operator route modules get. Reads may query the database; writes go through the owners. */
export interface OperatorDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  operators: OperatorCredentials;
  /** Browser console logins: their cookie is accepted like a Bearer credential. */
  consoleLogins: ConsoleLogins;
  audit: AuditTrail;
  roster: Roster;
  wallet: Wallet;
  fleetChanges: FleetChanges;
  /** Drivers' cards and vehicles (fleet/token-changes.ts). */
  tokenChanges: TokenChanges;
  requests: OperatorRequests;
  apiKeys: ApiKeys;
  /** The version-neutral charger port (connector views, commands). */
  chargers: ChargerCommands;
  /** Commands to chargers and operator session stops (charger-actions.ts). */
  chargerActions: ChargerActions;
  site: SiteDirectory;
  tariffs: TariffBook;
  chargerRegistry: ChargerRegistry;
  /** Firmware files, log uploads and their jobs (transfers/transfers.ts). */
  transfers: Transfers;
  /** Ends a charger's live connection (retired); false when it had none. */
  disconnect: (chargerId: string, reason: string) => boolean;
  live: LiveMeters;
  /** The last OCPP calls of each charger (no payloads). */
  calls: RecentCalls;
  read: SiteReadModel;
  /** The site's load manager; absent when the config has no power limit. */
  load?: { manager: LoadManager; policy: AllocationPolicy } | undefined;
  /** The site's run-time power limits; absent when the config has no site power limit. */
  powerLimits?: PowerLimits | undefined;
  settings: {
    siteId: string;
    /** IANA zone of the site (config site.timeZone): "today" and "this month" are counted in it. */
    timeZone: string;
    maxAmount: number;
    apiKeyOverlapHours: number;
    /** What the listeners offer chargers: profile 2 needs TLS, profile 3 a client CA. */
    chargerTls: { tls: boolean; clientCa: boolean };
  };
  health: () => Record<string, unknown>;
}

/**
 * A module of operator routes (the plugin seam). It registers its routes on `app` with paths
 * relative to /admin/v1; authentication has already happened (request.operator is set). Reads need
 * nothing more (a viewer may read); every route that acts spreads `operatorAction('name')` from
 * ./guard.js into its options: operator role required, answer recorded in the audit trail.
 */
export type OperatorRoutes = (app: FastifyInstance, deps: OperatorDeps) => void;

/** The answer's error code, for the audit record (the body is already serialized here). */
function errorCode(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const body = JSON.parse(payload) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Mounts the operator API on `app` under /admin/v1: every request needs an operator credential
 * (401), audited routes are recorded before their answer leaves (so an answer the client saw is
 * in the trail), then each module adds its routes.
 */
export function registerOperatorApi(
  app: FastifyInstance,
  deps: OperatorDeps,
  modules: readonly OperatorRoutes[],
): void {
  void app.register(
    async (scope) => {
      scope.addHook(
        'onRequest',
        authenticate(deps.operators, { logins: deps.consoleLogins, clock: deps.clock }),
      );
      scope.addHook('onSend', async (request, reply, payload) => {
        const action = request.routeOptions.config.audit;
        const operator = request.operator;
        if (action === undefined || operator === undefined) return payload;
        const status = reply.statusCode;
        const code = status >= 400 ? errorCode(payload) : undefined;
        deps.audit.record(
          operator,
          action,
          {
            params: request.params,
            query: request.query,
            body: maskTokenFields(request.body ?? null, request.routeOptions.config.auditMask),
          },
          status,
          code === undefined ? (request.auditResult ?? {}) : { error: code },
          new Date(deps.clock.now()).toISOString(),
        );
        return payload;
      });
      for (const register of modules) register(scope, deps);
    },
    { prefix: OPERATOR_PREFIX },
  );
}

/** The operator API on its own listener (config operator.http): only /admin/v1 is served there. */
export function buildOperatorServer(
  deps: OperatorDeps,
  modules: readonly OperatorRoutes[],
  options: { tls: TlsMaterial | undefined; bodyLimitBytes: number },
): FastifyInstance {
  const app = createJsonServer({ log: deps.log, ...options });
  collectOpenApi(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    return sendError(reply, 'not_found', `no route ${request.method} ${path}`);
  });
  registerOperatorApi(app, deps, modules);
  return app;
}
