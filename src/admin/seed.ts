import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ApiKeys } from '../auth/api-keys.js';
import { Roster } from '../fleet/roster.js';
import type { Db } from '../store/database.js';
import { Outbox } from '../store/outbox.js';
import { Wallet } from '../wallet/wallet.js';

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
  .strict();

export type SeedFile = z.output<typeof seedSchema>;

export interface SeedReport {
  fleets: number;
  apiKeys: number;
  drivers: number;
  openingBalances: number;
}

export function readSeedFile(path: string): SeedFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  const parsed = seedSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `seed file key ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * Loads fleets, API keys (stored hashed), drivers and opening balances in one transaction.
 * Idempotent: what is already there is left as it is, so a second run changes nothing and counts 0.
 */
export function applySeed(db: Db, seed: SeedFile, at: string): SeedReport {
  const roster = new Roster(db);
  const apiKeys = new ApiKeys(db);
  const wallet = new Wallet(db, new Outbox(db));
  const report: SeedReport = { fleets: 0, apiKeys: 0, drivers: 0, openingBalances: 0 };
  db.transaction(() => {
    for (const fleet of seed.fleets) {
      if (roster.upsertFleet(fleet.id, fleet.name, at)) report.fleets++;
      for (const key of fleet.apiKeys)
        if (apiKeys.register(fleet.id, key, 'seed', at)) report.apiKeys++;
      for (const d of fleet.drivers) {
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
      }
    }
  })();
  return report;
}
