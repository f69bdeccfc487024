import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

import { powerInputsProblem } from '../power/limit-inputs-config.js';
import { microNgnPerWh } from '../pricing/money.js';
import { Tariff } from '../pricing/tariff.js';
import { readYaml } from './read-yaml.js';
import { configSchema, type CircuitConfig, type GatewayConfig } from './schema.js';

export class ConfigError extends Error {}

/**
 * What the example configs put where a site must fill in its own value (a charger's password
 * hash, the broker password): a gateway started on an unedited copy refuses to run.
 */
export const PLACEHOLDER_PREFIX = 'CHANGE-ME';

/** Validates a parsed config object; every error names the key and what was wrong. */
export function parseConfig(raw: unknown, baseDir = process.cwd()): GatewayConfig {
  const placeholder = findPlaceholder(raw, []);
  if (placeholder) {
    throw new ConfigError(
      `config key ${placeholder} still holds a ${PLACEHOLDER_PREFIX} placeholder: ` +
        "replace it with this site's own value (see the comment beside it)",
    );
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new ConfigError(`config key ${where}: ${issue?.message ?? 'invalid'}`);
  }
  const config = result.data;
  checkReferences(config);
  if (config.database.path !== ':memory:' && !isAbsolute(config.database.path)) {
    config.database.path = resolve(baseDir, config.database.path);
  }
  if (config.transfers.directory !== undefined && !isAbsolute(config.transfers.directory)) {
    config.transfers.directory = resolve(baseDir, config.transfers.directory);
  }
  for (const tls of [
    config.uplink.tls,
    config.http.tls,
    config.ocpp.tls,
    config.operator.http?.tls,
  ]) {
    if (!tls) continue;
    type Files = Partial<Record<'ca' | 'cert' | 'key', string>>;
    const pairs = 'certificates' in tls ? (tls.certificates ?? []) : [];
    for (const files of [tls as Files, ...pairs]) {
      for (const k of ['ca', 'cert', 'key'] as const) {
        const file = (files as Files)[k];
        if (file !== undefined) (files as Files)[k] = resolve(baseDir, file);
      }
    }
  }
  return config;
}

export function readConfigFile(path: string): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = readYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(err as Error).message}`);
  }
  return parseConfig(raw, dirname(resolve(path)));
}

/** The first key (dotted path) whose value is a placeholder string. */
function findPlaceholder(value: unknown, path: (string | number)[]): string | undefined {
  if (typeof value === 'string') {
    return value.trim().startsWith(PLACEHOLDER_PREFIX)
      ? path.join('.') || '(top level)'
      : undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findPlaceholder(item, [...path, i]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, item] of Object.entries(value)) {
      const found = findPlaceholder(item, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}

function checkReferences(config: GatewayConfig): void {
  for (const [name, tariff] of Object.entries(config.tariffs)) {
    try {
      microNgnPerWh(tariff.pricePerKwh);
    } catch (err) {
      throw new ConfigError(`config key tariffs.${name}.pricePerKwh: ${(err as Error).message}`);
    }
    try {
      new Tariff(tariff, config.site.timeZone);
    } catch (err) {
      throw new ConfigError(`config key tariffs.${name}.windows: ${(err as Error).message}`);
    }
  }
  const chargerIds = new Set<string>();
  config.chargers.forEach((charger, i) => {
    if (chargerIds.has(charger.id)) {
      throw new ConfigError(`config key chargers.${i}.id: duplicate charger id ${charger.id}`);
    }
    chargerIds.add(charger.id);
    // A profile the listeners cannot offer would lock the charger out: say so at start-up.
    if (charger.securityProfile === 2 && !config.ocpp.tls && !config.http.tls) {
      throw new ConfigError(
        `config key chargers.${i}.securityProfile: profile 2 needs ocpp.tls or http.tls`,
      );
    }
    if (charger.securityProfile === 3 && !config.ocpp.tls?.ca) {
      throw new ConfigError(
        `config key chargers.${i}.securityProfile: profile 3 needs ocpp.tls with a ca`,
      );
    }
    const connectorIds = new Set<string>();
    const ocppIds = new Set<number>();
    charger.connectors.forEach((connector, j) => {
      const key = `chargers.${i}.connectors.${j}`;
      if (connectorIds.has(connector.id)) {
        throw new ConfigError(`config key ${key}.id: duplicate connector id ${connector.id}`);
      }
      connectorIds.add(connector.id);
      if (!(connector.tariff in config.tariffs)) {
        throw new ConfigError(`config key ${key}.tariff: no tariff named ${connector.tariff}`);
      }
      const ocppId = connector.ocppConnectorId ?? Number(connector.id);
      if (!Number.isSafeInteger(ocppId) || ocppId < 1) {
        throw new ConfigError(
          `config key ${key}.ocppConnectorId: required when id ${connector.id} is not a positive integer`,
        );
      }
      if (ocppIds.has(ocppId)) {
        throw new ConfigError(
          `config key ${key}.ocppConnectorId: duplicate OCPP connector ${ocppId}`,
        );
      }
      ocppIds.add(ocppId);
      connector.ocppConnectorId = ocppId;
    });
  });
  if (config.power) checkPowerTree(config.power.circuits);
  const powerProblem = powerInputsProblem(config);
  if (powerProblem) throw new ConfigError(powerProblem);
}

/** Circuit ids unique (and not 'site'); a connector wired to at most one circuit. */
function checkPowerTree(circuits: readonly CircuitConfig[]): void {
  const ids = new Set<string>(['site']);
  const wired = new Map<string, string>();
  const walk = (list: readonly CircuitConfig[], path: string): void => {
    list.forEach((circuit, i) => {
      const key = `${path}.${i}`;
      if (ids.has(circuit.id)) {
        throw new ConfigError(`config key ${key}.id: duplicate power node id ${circuit.id}`);
      }
      ids.add(circuit.id);
      circuit.connectors.forEach((ref, j) => {
        const other = wired.get(ref);
        if (other !== undefined) {
          throw new ConfigError(
            `config key ${key}.connectors.${j}: ${ref} is already on circuit ${other}`,
          );
        }
        wired.set(ref, circuit.id);
      });
      walk(circuit.circuits, `${key}.circuits`);
    });
  };
  walk(circuits, 'power.circuits');
}
