import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../config/read-config.js';
import { startGateway } from '../../gateway.js';
import { createLogger } from '../../shared/log.js';

/**
 * The OpenAPI document as the routes describe it, from a gateway started with the config
 * defaults (a temporary database, no charger, port 0) and asked for /openapi.json. The checked-in
 * docs/openapi.json is this, and a test fails when they differ (npm run openapi regenerates it).
 */
export async function generateOpenApi(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-openapi-'));
  try {
    const config = parseConfig(
      {
        siteId: 'openapi',
        http: { host: '127.0.0.1', port: 0 },
        database: { path: join(dir, 'gateway.db') },
        tariffs: {},
        chargers: [],
        log: { level: 'silent' },
      },
      dir,
    );
    const gateway = await startGateway(config, { log: createLogger('silent') });
    try {
      const res = await gateway.api.inject({ method: 'GET', url: '/openapi.json' });
      return res.json<Record<string, unknown>>();
    } finally {
      await gateway.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The file's text: stable key order as generated, two-space indent, final newline. */
export function openApiText(document: Record<string, unknown>): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
