import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ApiKeys } from '../../auth/api-keys.js';
import { sha256Hex } from '../../auth/secrets.js';
import { FleetChangeError } from '../../fleet/fleet-changes.js';
import { normalizeEmail, Roster } from '../../fleet/roster.js';
import { TokenChanges } from '../../fleet/token-changes.js';
import { ID_TOKEN_TYPES, IdTokenStore } from '../../id-tokens/id-token-store.js';
import { MAX_TOKEN_LABEL_LENGTH, tokenValueSchema } from '../../id-tokens/token-input.js';
import { boundTokenKey } from '../../id-tokens/token-key.js';
import type { Db } from '../../store/database.js';
import { Outbox } from '../../store/outbox.js';
import { Wallet } from '../../wallet/wallet.js';

const driverSchema = z
  .object({
    id: z.string().min(1).max(64),
    email: z
      .string()
      .trim()
      .min(3)
      .max(254)
      .regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address'),
    active: z.boolean().default(true),
    vehicle: z
      .object({ model: z.string().min(1).max(100), batteryKwh: z.number().positive().max(1000) })
      .strict()
      .optional(),
    openingBalance: z.number().int().min(0).max(100_000_000).default(0),
    /** Cards and vehicles bound to the driver (by the site's operator, as the operator API does). */
    tokens: z
      .array(
        z
          .object({
            kind: z.enum(['card', 'vehicle']).default('card'),
            type: z.enum(ID_TOKEN_TYPES),
            value: tokenValueSchema,
            label: z.string().max(MAX_TOKEN_LABEL_LENGTH).optional(),
            expiresAt: z.iso.datetime({ offset: false }).optional(),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

export const seedSchema = z
  .object({
    fleets: z.array(
      z
        .object({
          id: z.string().min(1).max(64),
          name: z.string().min(1).max(200),
          apiKeys: z
            .array(z.string().min(24, 'API keys must be at least 24 characters'))
            .default([]),
          drivers: z.array(driverSchema).default([]),
        })
        .strict(),
    ),
  })
  .strict()
  .superRefine((seed, ctx) => {
    // Said here in words, before SQLite would refuse the file with a constraint name.
    const fleetIds = new Set<string>();
    const driverIds = new Set<string>();
    const keys = new Map<string, string>();
    const tokens = new Map<string, string>();
    seed.fleets.forEach((fleet, i) => {
      if (fleetIds.has(fleet.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['fleets', i, 'id'],
          message: `fleet ${fleet.id} is listed twice`,
        });
      }
      fleetIds.add(fleet.id);
      fleet.apiKeys.forEach((key, k) => {
        const owner = keys.get(key);
        if (owner !== undefined && owner !== fleet.id) {
          ctx.addIssue({
            code: 'custom',
            path: ['fleets', i, 'apiKeys', k],
            message: `this API key is also fleet ${owner}'s; every fleet needs its own`,
          });
        }
        keys.set(key, fleet.id);
      });
      const emails = new Map<string, string>();
      fleet.drivers.forEach((d, j) => {
        if (driverIds.has(d.id)) {
          ctx.addIssue({
            code: 'custom',
            path: ['fleets', i, 'drivers', j, 'id'],
            message: `driver ${d.id} is listed twice`,
          });
        }
        driverIds.add(d.id);
        const email = normalizeEmail(d.email);
        const other = emails.get(email);
        if (other !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['fleets', i, 'drivers', j, 'email'],
            message: `${email} is already driver ${other}'s email in fleet ${fleet.id}`,
          });
        }
        emails.set(email, d.id);
        d.tokens.forEach((token, k) => {
          const holder = tokens.get(boundTokenKey(token.value));
          if (holder !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['fleets', i, 'drivers', j, 'tokens', k, 'value'],
              message: `this token is also listed for driver ${holder}; a token has one driver`,
            });
          }
          tokens.set(boundTokenKey(token.value), d.id);
        });
      });
    });
  });

export type SeedFile = z.output<typeof seedSchema>;

export interface SeedReport {
  fleets: number;
  apiKeys: number;
  drivers: number;
  openingBalances: number;
  tokens: number;
}

export function readSeedFile(path: string): SeedFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`seed file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = seedSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `seed file ${path}, key ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** A seed the database refuses; nothing of the seed was applied (one transaction). */
export class SeedError extends Error {}

/**
 * Loads fleets, API keys (stored hashed), drivers and opening balances in one transaction.
 * Idempotent: what is already there is left as it is, so a second run changes nothing and counts 0.
 */
export function applySeed(db: Db, seed: SeedFile, at: string): SeedReport {
  const roster = new Roster(db);
  const apiKeys = new ApiKeys(db);
  const wallet = new Wallet(db, new Outbox(db));
  // Made on first use: a seed without tokens must also apply to a database an older gateway made
  // (the upgrade test seeds one before migrating it), which has no id_tokens table yet.
  let tokenChanges: TokenChanges | undefined;
  const tokens = () => (tokenChanges ??= new TokenChanges(roster, new IdTokenStore(db)));
  const report: SeedReport = { fleets: 0, apiKeys: 0, drivers: 0, openingBalances: 0, tokens: 0 };
  const refuse = (what: string): never => {
    throw new SeedError(`seed not applied (nothing was changed): ${what}`);
  };
  const apply = db.transaction(() => {
    for (const fleet of seed.fleets) {
      if (roster.upsertFleet(fleet.id, fleet.name, at)) report.fleets++;
      for (const [k, key] of fleet.apiKeys.entries()) {
        const owner = apiKeys.ownerOfHash(sha256Hex(key));
        if (owner !== undefined && owner !== fleet.id) {
          refuse(`fleet ${fleet.id}, API key ${k + 1}: it is already registered to fleet ${owner}`);
        }
        if (apiKeys.register(fleet.id, key, 'seed', at)) report.apiKeys++;
      }
      for (const d of fleet.drivers) {
        const existing = roster.driver(d.id);
        if (existing && existing.fleetId !== fleet.id) {
          refuse(`driver ${d.id} belongs to fleet ${existing.fleetId}, not ${fleet.id}`);
        }
        const sameEmail = roster.driverByEmail(fleet.id, d.email);
        if (sameEmail && sameEmail.id !== d.id) {
          refuse(
            `fleet ${fleet.id}, driver ${d.id}: ${sameEmail.email} is already the email of ` +
              `driver ${sameEmail.id}; one email per driver in a fleet`,
          );
        }
        const changed = roster.upsertDriver(
          {
            id: d.id,
            fleetId: fleet.id,
            email: d.email,
            active: d.active,
            vehicleModel: d.vehicle?.model ?? null,
            vehicleBatteryWh: d.vehicle ? Math.round(d.vehicle.batteryKwh * 1000) : null,
          },
          at,
        );
        if (changed) report.drivers++;
        wallet.ensureWallet(d.id, at);
        if (
          d.openingBalance > 0 &&
          wallet.credit(d.id, 'opening', d.openingBalance, `seed:${d.id}`, at)
        ) {
          report.openingBalances++;
        }
        for (const token of d.tokens) {
          try {
            if (tokens().bind({ ...token, driverId: d.id }, 'operator', at).changed)
              report.tokens++;
          } catch (err) {
            if (!(err instanceof FleetChangeError)) throw err;
            refuse(`driver ${d.id}: ${err.message}`);
          }
        }
      }
    }
  });
  try {
    apply();
  } catch (err) {
    if (err instanceof SeedError) throw err;
    refuse(`the database refused it (${(err as Error).message})`);
  }
  return report;
}
