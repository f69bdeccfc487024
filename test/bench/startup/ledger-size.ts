import { statSync } from 'node:fs';
import { join } from 'node:path';
import { SessionOutcomes } from '../../../src/charging/outcomes.js';
import { newIdToken, newSessionId } from '../../../src/charging/id-tokens.js';
import { SessionStore } from '../../../src/charging/session-store.js';
import { openDatabase } from '../../../src/store/database.js';
import { Outbox } from '../../../src/store/outbox.js';
import { Wallet } from '../../../src/wallet/wallet.js';
import { seedBenchFleet } from '../lib/seed.js';

export interface LedgerSize {
  entries: number;
  sessions: number;
  fileBytes: number;
  /** Bytes per table and index, from SQLite's dbstat: what the file holds besides the ledger. */
  byObject: { name: string; bytes: number }[];
}

/**
 * A database grown to `targetEntries` ledger entries the way a site grows it: sessions debited and
 * settled by the gateway's own store classes (the same statements and outbox events as
 * Charging.debit, the lifecycle's state changes and SessionOutcomes.settle), a top-up now and
 * then. Sessions are batched 500 to a transaction only to keep the bench short; the rows and pages
 * are the same.
 */
export function growLedger(dir: string, targetEntries: number): LedgerSize {
  const path = join(dir, 'ledger.db');
  const db = openDatabase(path);
  const outbox = new Outbox(db);
  const wallet = new Wallet(db, outbox);
  const sessions = new SessionStore(db);
  const outcomes = new SessionOutcomes(db, sessions, wallet, outbox);
  const at = () => new Date().toISOString();
  const drivers = seedBenchFleet(db, 200, 1_000_000);
  const count = db.prepare('SELECT count(*) AS n FROM ledger_entries');
  let entries = (count.get() as { n: number }).n;
  let made = 0;
  while (entries < targetEntries) {
    db.transaction(() => {
      for (let b = 0; b < 500 && entries < targetEntries; b++, made++) {
        const driverId = drivers[made % drivers.length] as string;
        if (made % 25 === 0) {
          wallet.credit(driverId, 'top_up', 50_000, `topup-${made}`, at());
          entries++;
        }
        const id = newSessionId();
        const amount = 2_000 + (made % 7) * 500;
        const s = {
          id,
          driverId,
          chargerId: `CP-${made % 40}`,
          connectorId: String(1 + (made % 2)),
          amount,
        };
        sessions.insert({
          ...s,
          microNgnPerWh: 412_500,
          limitWh: Math.floor((amount * 1e6) / 412_500),
          idToken: newIdToken(),
          createdAt: at(),
        });
        wallet.debitSession(driverId, id, amount, at());
        outcomes.event(s, 'authorizing', at());
        sessions.markAuthorized(id, at());
        outcomes.event(s, 'authorized', at());
        sessions.markCharging(id, String(100_000 + made), 10_000 + made, at());
        outcomes.event(s, 'charging', at(), {
          transactionRef: String(100_000 + made),
          meterStartWh: 10_000 + made,
        });
        const charging = sessions.get(id);
        if (!charging) throw new Error(`session ${id} not stored`);
        outcomes.settle(charging, 1_000 + ((made * 37) % 4_000), 'EVDisconnected', at(), {
          line: 'driver',
          gapWh: null,
        });
        entries += 2;
      }
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  const byObject = (
    db
      .prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC')
      .all() as {
      name: string;
      bytes: number;
    }[]
  ).filter((o) => o.bytes > 0);
  const result = { entries, sessions: made, fileBytes: statSync(path).size, byObject };
  db.close();
  return result;
}
