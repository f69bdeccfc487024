import type { Transaction } from 'better-sqlite3';
import type { Db } from './database.js';

type Runner = Transaction<(work: () => unknown) => unknown>;
const runners = new WeakMap<Db, Runner>();

function runnerOf(db: Db): Runner {
  let r = runners.get(db);
  if (r === undefined) {
    r = db.transaction((work: () => unknown) => work());
    runners.set(db, r);
  }
  return r;
}

/**
 * Runs `work` as one transaction (a savepoint when one is open): `db.transaction(work)()`
 * without building a new transaction function per call, which better-sqlite3 does with four
 * wrappers and their properties each time (8.6 % of the gateway's CPU at OCPP saturation, when
 * every meter sample and group-commit write made one).
 */
export function atomic<T>(db: Db, work: () => T): T {
  return runnerOf(db)(work) as T;
}

/** `atomic` starting with BEGIN IMMEDIATE: takes the write lock at once. */
export function atomicImmediate<T>(db: Db, work: () => T): T {
  return runnerOf(db).immediate(work) as T;
}
