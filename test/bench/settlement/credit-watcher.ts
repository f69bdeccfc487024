import Database from 'better-sqlite3';
import type { FromWatcher, ToWatcher } from './messages.js';

/**
 * Sees when a session's credit is committed, from outside the gateway: a read-only connection to
 * its WAL database, polled in a tight synchronous loop while a stop is in flight (and idle
 * otherwise, so it does not take a core from the gateway between stops). A WAL reader sees a
 * transaction once its commit frame is in the WAL and the wal-index says so, which with
 * synchronous=FULL is after the fsync: "seen" here means durable.
 */
let db: Database.Database | null = null;
let credits: Database.Statement<[number], { seq: number; session_id: string }> | null = null;
let lastSeq = 0;

function send(message: FromWatcher, then: () => void = () => undefined): void {
  process.send?.(message, then);
}

function watch(sessionIds: string[], timeoutMs: number): void {
  if (!credits) throw new Error('watch before open');
  const pending = new Set(sessionIds);
  const at: Record<string, string> = {};
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(timeoutMs) * 1_000_000n;
  let polls = 0;
  let now = start;
  let maxGapNs = 0n;
  while (pending.size > 0 && now < deadline) {
    const rows = credits.all(lastSeq);
    const before = now;
    now = process.hrtime.bigint();
    if (now - before > maxGapNs) maxGapNs = now - before;
    polls++;
    for (const row of rows) {
      lastSeq = Math.max(lastSeq, row.seq);
      if (pending.delete(row.session_id)) at[row.session_id] = now.toString();
    }
  }
  send({
    type: 'seen',
    at,
    polls,
    spanNs: (now - start).toString(),
    maxGapNs: maxGapNs.toString(),
  });
}

process.on('message', (message: ToWatcher) => {
  switch (message.type) {
    case 'open':
      db = new Database(message.dbPath, { readonly: true, fileMustExist: true });
      credits = db.prepare(
        "SELECT seq, session_id FROM ledger_entries WHERE seq > ? AND kind = 'session_credit'",
      );
      lastSeq =
        (db.prepare('SELECT max(seq) AS s FROM ledger_entries').get() as { s: number | null }).s ??
        0;
      send({ type: 'ready' });
      break;
    case 'watch':
      // Spin only once the bench has heard we are about to: it sends the stop after 'watching'.
      send({ type: 'watching' }, () =>
        setImmediate(() => watch(message.sessionIds, message.timeoutMs)),
      );
      break;
    case 'close':
      db?.close();
      process.disconnect();
      break;
  }
});
