import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Diagnostic preload: counts the gateway's SQLite commits by where they come from, e.g.
 *   BENCH_COMMIT_COUNT_DIR=/tmp/c \
 *   BENCH_GATEWAY_NODE_OPTIONS=--import=$PWD/dist-bench/test/bench/http/commit-count.js \
 *   npm run bench -- --only start
 * A commit is an outermost `db.transaction(...)` call or a writing statement run outside one. The
 * counts (JSON, most first) are written at a clean exit. Each count captures a stack, so never
 * measure speed with this loaded.
 */
const dir = process.env.BENCH_COMMIT_COUNT_DIR;
if (dir) {
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  const counts = new Map<string, number>();
  const count = (kind: string): void => {
    const frame = (new Error().stack ?? '')
      .split('\n')
      .slice(3)
      .find((l) => l.includes('/dist/') && !l.includes('better-sqlite3'));
    const where = `${kind} ${
      frame
        ?.trim()
        .replace(/^at /, '')
        .replace(/file:\/\/\S*\/dist\//, '') ?? '?'
    }`;
    counts.set(where, (counts.get(where) ?? 0) + 1);
  };
  const proto = Database.prototype as unknown as {
    transaction(fn: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown;
    prepare(sql: string): BetterSqlite3.Statement;
  };
  const transaction = proto.transaction;
  proto.transaction = function (this: BetterSqlite3.Database, fn) {
    const wrapped = transaction.call(this, fn);
    return (...args: unknown[]) => {
      if (!this.inTransaction) count('transaction');
      return wrapped(...args);
    };
  };
  const prepare = proto.prepare;
  proto.prepare = function (this: BetterSqlite3.Database, sql) {
    const statement = prepare.call(this, sql);
    if (!statement.reader) {
      const run = statement.run.bind(statement);
      statement.run = (...args: unknown[]) => {
        if (!this.inTransaction) count('autocommit');
        return run(...args);
      };
    }
    return statement;
  };
  process.once('exit', () => {
    writeFileSync(
      join(dir, `commits-${process.pid}.json`),
      JSON.stringify(
        [...counts].sort((a, b) => b[1] - a[1]),
        null,
        1,
      ) + '\n',
    );
  });
}
