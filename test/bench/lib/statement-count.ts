import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Diagnostic preload: counts every SQLite statement the gateway runs, by its SQL, and every
 * prepare, e.g.
 *   BENCH_STATEMENT_COUNT_DIR=/tmp/s \
 *   BENCH_GATEWAY_NODE_OPTIONS=--import=$PWD/dist-bench/test/bench/lib/statement-count.js \
 *   npm run bench -- --only settlement
 * Divide by the operations the section made (e.g. the `UPDATE sessions SET state = 'settled'`
 * count) for statements per operation; a prepare counted far more often than at start-up is a
 * statement prepared per call. Written as JSON (most run first) at a clean exit. The wrappers
 * cost time: never measure speed with this loaded.
 */
const dir = process.env.BENCH_STATEMENT_COUNT_DIR;
if (dir) {
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  const runs = new Map<string, number>();
  const prepares = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const short = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 140);
  const proto = Database.prototype as unknown as {
    prepare(sql: string): BetterSqlite3.Statement;
  };
  const prepare = proto.prepare;
  proto.prepare = function (this: BetterSqlite3.Database, sql) {
    const statement = prepare.call(this, sql);
    const key = short(sql);
    bump(prepares, key);
    const s = statement as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const method of ['run', 'get', 'all', 'iterate'] as const) {
      const original = s[method];
      if (typeof original !== 'function') continue;
      s[method] = (...args: unknown[]) => {
        bump(runs, `${method} ${key}`);
        return original.apply(statement, args);
      };
    }
    return statement;
  };
  process.once('exit', () => {
    const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
    writeFileSync(
      join(dir, `statements-${process.pid}.json`),
      JSON.stringify({ runs: sorted(runs), prepares: sorted(prepares) }, null, 1),
    );
  });
}
