import type { FastifyInstance } from 'fastify';
import { registerConsoleLogin, type ConsoleLoginOptions } from './session-routes.js';
import { registerConsoleStatic } from './static-routes.js';

export interface ConsoleOptions extends ConsoleLoginOptions {
  /** The browser app's bundle (index.html and its assets); DEFAULT_BUNDLE_DIR in the gateway. */
  bundleDir: string;
}

/**
 * The browser console, on the app that serves the operator API (so on the operator listener when
 * there is one): its page and assets, and its login. Its data is /admin/v1 itself, which accepts
 * the login's cookie (operator/guard.ts).
 */
export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  registerConsoleStatic(app, options.bundleDir);
  // A plugin, like the operator API: the OpenAPI collector only sees routes added after it loads.
  void app.register(async (scope) => registerConsoleLogin(scope, options));
}
