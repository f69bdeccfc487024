import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ChargePointOptions } from './charge-point-options.js';
import type { VehicleSpec } from './metered-outlet.js';
import { isPersonalityName, PERSONALITY_NAMES } from './personalities.js';

const NUMERIC_PLUG_KEYS = new Set(['batteryKwh', 'soc', 'maxPowerW']);

/** "1:model=Hyundai Ioniq 5,batteryKwh=77.4,soc=35,maxPowerW=150000" as a plain object. */
export function parsePlugSpec(spec: string): Record<string, unknown> {
  const colon = spec.indexOf(':');
  const head = colon < 0 ? spec : spec.slice(0, colon);
  const result: Record<string, unknown> = {
    connector: /^\d+$/.test(head.trim()) ? Number(head) : head,
  };
  const body = colon < 0 ? '' : spec.slice(colon + 1);
  for (const pair of body.split(',').filter((part) => part.trim().length > 0)) {
    const equals = pair.indexOf('=');
    const key = (equals < 0 ? pair : pair.slice(0, equals)).trim();
    const value = equals < 0 ? '' : pair.slice(equals + 1).trim();
    const numeric = NUMERIC_PLUG_KEYS.has(key) && value !== '' && Number.isFinite(Number(value));
    // Leaving bad values as strings lets the schema name the key in its error.
    result[key] = numeric ? Number(value) : value;
  }
  return result;
}

const plugSchema = z.preprocess(
  (value) => (typeof value === 'string' ? parsePlugSpec(value) : value),
  z.strictObject({
    connector: z.number().int().min(1),
    model: z.string().min(1).default('Generic EV'),
    batteryKwh: z.number().positive().default(60),
    soc: z.number().min(0).max(100).default(20),
    maxPowerW: z.number().positive().default(100_000),
    /** The EV's MAC (EVCCID): the charger identifies it at plug-in (AutoCharge). */
    mac: z
      .string()
      .regex(/^[0-9A-Fa-f]{2}(?:[:-]?[0-9A-Fa-f]{2}){5}$/, 'must be 6 bytes of hex')
      .optional(),
    /** A card the driver taps after plugging in: its UID in hex, or any idTag. */
    card: z
      .string()
      .regex(/^[\x21-\x7e]{1,36}$/, 'must be 1 to 36 printable characters')
      .optional(),
  }),
);

export const simulatorConfigSchema = z
  .strictObject({
    url: z.string().regex(/^wss?:\/\//, 'must start with ws:// or wss://'),
    id: z.string().min(1).max(48),
    password: z.string().min(1).optional(),
    /** PEM file paths for wss://: the central system's CA; client certificate and key (profile 3). */
    ca: z.string().min(1).optional(),
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    connectors: z.number().int().min(1).default(1),
    maxPowerW: z.number().positive().optional(),
    timeFactor: z.number().positive().optional(),
    /** Simulated seconds from accepting a charging profile to drawing its power. */
    profileDelaySeconds: z.number().min(0).optional(),
    meterStartWh: z.number().int().min(0).optional(),
    plug: z.array(plugSchema).default([]),
    replugAfter: z.number().min(0).optional(),
    unplugWhenFull: z.boolean().default(false),
    remoteStart: z.enum(['accept', 'reject', 'ignore']).default('accept'),
    vendor: z.string().min(1).max(20).optional(),
    model: z.string().min(1).max(20).optional(),
    /** Firmware personalities: "numeric-values,clock-skew=-5" or a list. */
    personality: z
      .union([z.string(), z.array(z.string())])
      .transform((value) => (typeof value === 'string' ? [value] : value))
      .optional(),
  })
  .superRefine((config, ctx) => {
    const entries = (config.personality ?? []).flatMap((entry) => entry.split(','));
    for (const entry of entries.map((part) => part.split('=')[0]?.trim() ?? '')) {
      if (entry !== '' && !isPersonalityName(entry)) {
        ctx.addIssue({
          code: 'custom',
          path: ['personality'],
          message: `unknown personality "${entry}" (known: ${PERSONALITY_NAMES.join(', ')})`,
        });
      }
    }
    if ((config.cert === undefined) !== (config.key === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['cert'], message: 'cert and key go together' });
    }
    config.plug.forEach((plug, index) => {
      if (plug.connector > config.connectors) {
        ctx.addIssue({
          code: 'custom',
          path: ['plug', index, 'connector'],
          message: `connector ${plug.connector} exceeds connectors (${config.connectors})`,
        });
      }
    });
  });

export type SimulatorConfig = z.output<typeof simulatorConfigSchema>;
export type PlugConfig = SimulatorConfig['plug'][number];

function kebabFlag(key: string): string {
  return `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

function formatPath(path: readonly PropertyKey[], asFlags: boolean): string {
  return path
    .map((part, index) => {
      if (typeof part === 'number') return `[${part}]`;
      if (index === 0 && asFlags) return kebabFlag(String(part));
      return `${index === 0 ? '' : '.'}${String(part)}`;
    })
    .join('');
}

/**
 * One line naming the offending key, e.g. "sims.yaml[1] maxPowerW: Too small: ...". With
 * source undefined the config came from command-line flags, which are named as such.
 */
export function formatConfigError(error: z.ZodError, source: string | undefined): string {
  const issue = error.issues[0];
  if (!issue) return `${source ?? 'options'}: invalid configuration`;
  const path = formatPath(issue.path, source === undefined);
  const where = source === undefined ? path || 'options' : `${source}${path ? ' ' : ''}${path}`;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    return `${where}: unknown key ${keys}`;
  }
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `${where}: required`;
  }
  return `${where}: ${issue.message}`;
}

export class ConfigError extends Error {}

/** Validates one charge point's config; source names the file entry (undefined: flags). */
export function validateConfig(raw: unknown, source: string | undefined): SimulatorConfig {
  const result = simulatorConfigSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(formatConfigError(result.error, source));
  return result.data;
}

/** Reads a YAML (or JSON, which is YAML) list of simulator configs; `defaults` fill gaps. */
export async function loadConfigFile(
  path: string,
  defaults: Record<string, unknown>,
): Promise<SimulatorConfig[]> {
  let parsed: unknown;
  try {
    parsed = parseYaml(await readFile(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(`${path}: expected a list of charge points`);
  const entries: unknown[] = parsed;
  return entries.map((entry, index) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new ConfigError(`${path}[${index}]: expected an object`);
    }
    return validateConfig({ ...defaults, ...entry }, `${path}[${index}]`);
  });
}

export function toChargePointOptions(config: SimulatorConfig): ChargePointOptions {
  return {
    url: config.url,
    identity: config.id,
    password: config.password,
    tls: clientTls(config),
    connectors: config.connectors,
    maxPowerW: config.maxPowerW,
    timeFactor: config.timeFactor,
    profileDelaySeconds: config.profileDelaySeconds,
    meterStartWh: config.meterStartWh,
    remoteStart: config.remoteStart,
    unplugWhenFull: config.unplugWhenFull,
    vendor: config.vendor,
    model: config.model,
    personality: config.personality,
  };
}

function readPem(path: string | undefined, flag: string): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${flag} ${path}: ${(error as Error).message}`);
  }
}

function clientTls(config: SimulatorConfig): ChargePointOptions['tls'] {
  if (config.ca === undefined && config.cert === undefined) return undefined;
  return {
    ca: readPem(config.ca, '--ca'),
    cert: readPem(config.cert, '--cert'),
    key: readPem(config.key, '--key'),
  };
}

export function toVehicle(plug: PlugConfig): VehicleSpec {
  return {
    model: plug.model,
    batteryKwh: plug.batteryKwh,
    socPercent: plug.soc,
    maxPowerW: plug.maxPowerW,
    ...(plug.mac === undefined ? {} : { macAddress: plug.mac }),
  };
}
