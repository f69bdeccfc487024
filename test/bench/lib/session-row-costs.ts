import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { newIdToken, newSessionId } from '../../../src/charging/id-tokens.js';
import { SessionStore } from '../../../src/charging/session-store.js';
import { uuid7 } from '../../../src/shared/uuid7.js';
import { openBareDatabase } from './bare-database.js';
import { seedReferenceDriver } from './seed.js';
import { spreadOf } from './stats.js';

/**
 * What makes the session row's four writes of a Start's life (insert, authorized, charging,
 * settled) cost what they cost: the same writes through SessionStore on the gateway's schema and
 * on copies with one part taken away each (its triggers, its partial indexes on `state`, its other
 * index, its CHECKs, its foreign keys), then all of them; a one-column UPDATE as the floor.
 *   node dist-bench/test/bench/lib/session-row-costs.js
 * Each table holds HISTORY settled sessions first (an index's depth is part of its cost). Each
 * round runs every variant in turn, SESSIONS lives per variant twice: inside one transaction rolled
 * back at its end (the statement alone, its pages staying dirty in the cache), then each write
 * committed alone at synchronous=NORMAL as the gateway commits them (the pages it dirtied copied
 * into the WAL; no fsync: that is the commit's, the same for any write). ROUNDS rounds after one
 * warm-up, the median printed.
 */
const SESSIONS = 2_000;
const HISTORY = 20_000;
const ROUNDS = 9;

const TRIGGERS = [
  'sessions_terminal_is_final',
  'sessions_outcome_needs_entry',
  'sessions_origin_names_its_token',
];
const PARTIAL_INDEXES = [
  'sessions_open',
  'sessions_one_open_per_connector',
  'sessions_one_open_per_id_token',
];

interface Variant {
  name: string;
  /** Run on the migrated database before anything is written to it. */
  strip(db: Database.Database): void;
}

const dropAll = (db: Database.Database, kind: 'TRIGGER' | 'INDEX', names: string[]): void => {
  for (const name of names) db.exec(`DROP ${kind} ${name}`);
};

const VARIANTS: Variant[] = [
  { name: 'the schema as it is', strip: () => undefined },
  { name: 'without its triggers', strip: (db) => dropAll(db, 'TRIGGER', TRIGGERS) },
  {
    name: 'without its 3 partial indexes on state',
    strip: (db) => dropAll(db, 'INDEX', PARTIAL_INDEXES),
  },
  { name: 'without sessions_open alone', strip: (db) => dropAll(db, 'INDEX', ['sessions_open']) },
  { name: 'without sessions_driver', strip: (db) => dropAll(db, 'INDEX', ['sessions_driver']) },
  { name: 'CHECKs not enforced', strip: (db) => db.pragma('ignore_check_constraints = ON') },
  { name: 'foreign keys off', strip: (db) => db.pragma('foreign_keys = OFF') },
  {
    name: 'all of the above taken away',
    strip: (db) => {
      dropAll(db, 'TRIGGER', TRIGGERS);
      dropAll(db, 'INDEX', [...PARTIAL_INDEXES, 'sessions_driver']);
      db.pragma('ignore_check_constraints = ON');
      db.pragma('foreign_keys = OFF');
    },
  },
];

const MODES = ['in one transaction', 'each committed alone'] as const;
type Mode = (typeof MODES)[number];

const STEPS = ['insert', 'markAuthorized', 'markCharging', 'markSettled', 'one-column UPDATE'];

interface Bench {
  variant: Variant;
  db: Database.Database;
  store: SessionStore;
  credit: Database.Statement;
  touch: Database.Statement;
}

const dir = mkdtempSync(join(tmpdir(), 'session-row-costs-'));
const benches: Bench[] = [];
try {
  const at = new Date().toISOString();
  for (const [i, variant] of VARIANTS.entries()) {
    const db = openBareDatabase(join(dir, `v${i}.db`));
    db.pragma('synchronous = NORMAL');
    seedReferenceDriver(db, at);
    variant.strip(db);
    const history = db.prepare(
      `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount,
         price_micro_ngn_per_wh, limit_wh, id_token, transaction_ref, delivered_wh, cost, credited,
         created_at, ended_at)
       VALUES (?, 'drv-ref', ?, '1', 'settled', 2000, 412500, 4848, ?, ?, 4848, 2000, 0, ?, ?)`,
    );
    db.transaction(() => {
      for (let h = 0; h < HISTORY; h++) {
        history.run(
          newSessionId(Date.now() - HISTORY + h),
          `CP-${h % 100}`,
          newIdToken(),
          `h${h}`,
          at,
          at,
        );
      }
    })();
    benches.push({
      variant,
      db,
      store: new SessionStore(db),
      credit: db.prepare(
        `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
         VALUES (?, 'drv-ref', 'session_credit', 0,
           (SELECT balance FROM wallets WHERE driver_id = 'drv-ref'), ?, ?)`,
      ),
      touch: db.prepare('UPDATE sessions SET last_activity_at = ? WHERE id = ?'),
    });
  }

  const perCall = new Map<string, number[]>();
  const time = (key: string, round: number, run: () => void): void => {
    const before = process.cpuUsage();
    run();
    const used = process.cpuUsage(before);
    if (round === 0) return;
    const list = perCall.get(key) ?? [];
    list.push((used.user + used.system) / SESSIONS);
    perCall.set(key, list);
  };

  const runLives = (bench: Bench, mode: Mode, round: number): void => {
    const { variant, db, store, credit, touch } = bench;
    // The gateway's own ids: a session's in time order, its token random.
    const lives = Array.from({ length: SESSIONS }, (_, i) => ({
      id: newSessionId(),
      token: newIdToken(),
      chargerId: `CP-${i}`,
      ref: `${round}-${i}`,
    }));
    if (mode === 'in one transaction') db.exec('BEGIN');
    const key = (step: string): string => `${mode}\u0000${variant.name}\u0000${step}`;
    time(key('insert'), round, () => {
      for (const s of lives) {
        store.insert({
          id: s.id,
          driverId: 'drv-ref',
          chargerId: s.chargerId,
          connectorId: '1',
          amount: 2000,
          microNgnPerWh: 412_500,
          limitWh: 4848,
          idToken: s.token,
          createdAt: at,
        });
      }
    });
    time(key('markAuthorized'), round, () => {
      for (const s of lives) store.markAuthorized(s.id, at);
    });
    time(key('markCharging'), round, () => {
      for (const s of lives) store.markCharging(s.id, s.ref, 1000, at);
    });
    time(key('one-column UPDATE'), round, () => {
      for (const s of lives) touch.run(at, s.id);
    });
    for (const s of lives) credit.run(uuid7(), s.id, at);
    time(key('markSettled'), round, () => {
      for (const s of lives) {
        store.markSettled(s.id, {
          deliveredWh: 4848,
          cost: 2000,
          credited: 0,
          reason: 'Local',
          at,
          stopLine: 'driver',
          stopLineGapWh: null,
        });
      }
    });
    if (mode === 'in one transaction') db.exec('ROLLBACK');
  };

  for (let round = 0; round <= ROUNDS; round++) {
    for (const bench of benches) {
      for (const mode of MODES) runLives(bench, mode, round);
    }
  }

  for (const mode of MODES) {
    console.log(
      `\nCPU per write (µs), ${mode}: ${SESSIONS} lives over ${HISTORY}+ settled sessions, median of ${ROUNDS} rounds`,
    );
    console.log(['variant'.padEnd(40), ...STEPS.map((s) => s.padStart(18))].join(''));
    for (const { variant } of benches) {
      const cells = STEPS.map((step) => {
        const us = perCall.get(`${mode}\u0000${variant.name}\u0000${step}`) ?? [];
        return spreadOf(us).median.toFixed(1).padStart(18);
      });
      console.log([variant.name.padEnd(40), ...cells].join(''));
    }
  }
} finally {
  for (const { db } of benches) db.close();
  rmSync(dir, { recursive: true, force: true });
}
