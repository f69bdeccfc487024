import { applySeed, seedSchema } from '../../../src/cli/offline/seed.js';
import type { Db } from '../../../src/store/database.js';

export function driverId(i: number): string {
  return `drv-${String(i).padStart(4, '0')}`;
}

export function driverEmail(i: number): string {
  return `d${String(i).padStart(4, '0')}@bench.test`;
}

/**
 * The bench fleet through the real seed path: drivers `drv-0000`… (`d0000@bench.test`…), each
 * with `balance` NGN. Returns the driver ids.
 */
export function seedBenchFleet(
  db: Db,
  drivers: number,
  balance: number,
  apiKeys: string[] = [],
): string[] {
  const ids = Array.from({ length: drivers }, (_, i) => driverId(i));
  applySeed(
    db,
    seedSchema.parse({
      fleets: [
        {
          id: 'fleet-bench',
          name: 'Bench fleet',
          apiKeys,
          drivers: ids.map((id, i) => ({ id, email: driverEmail(i), openingBalance: balance })),
        },
      ],
    }),
    new Date().toISOString(),
  );
  return ids;
}

/**
 * The bare references' one driver, `drv-ref`, with 100,000,000 NGN, through the real seed path:
 * its wallet and opening entry are what the statements measured read and write.
 */
export function seedReferenceDriver(db: Db, at: string): void {
  applySeed(
    db,
    seedSchema.parse({
      fleets: [
        {
          id: 'fleet-ref',
          name: 'Reference fleet',
          apiKeys: ['fgk_reference_key_00000000000000000001'],
          drivers: [{ id: 'drv-ref', email: 'ref@bench.test', openingBalance: 100_000_000 }],
        },
      ],
    }),
    at,
  );
}
