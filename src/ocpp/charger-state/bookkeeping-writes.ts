import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import { groupCommit } from '../../store/group-commit.js';

/** More writes than this within WINDOW_MS make a busy link (a few chargers never do). */
export const BUSY_WRITES = 32;
const WINDOW_MS = 50;
/** How long a busy link's writes gather before they go to the group commit together. */
export const GATHER_MS = 10;

interface Write {
  run: () => unknown;
  what: string;
}

/**
 * Last-seen stamps, boots and statuses: not money (relaxed, store/durability.ts), and nothing
 * waits for them. They join the turn's group commit at once, unless more than BUSY_WRITES came
 * within WINDOW_MS (a reconnect storm: thousands of chargers, three writes each): then those of
 * the next GATHER_MS go to the group commit as one write. One savepoint instead of hundreds and,
 * across turns, far fewer commits, each appending the same table pages to the WAL once. Each is
 * a single statement, so one that fails is rolled back alone (SQLite's statement atomicity) and
 * logged.
 */
export class BookkeepingWrites {
  private waiting: Write[] = [];
  /** Set while a busy link's writes gather. */
  private timer: NodeJS.Timeout | null = null;
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  add(run: () => unknown, what: string): void {
    this.waiting.push({ run, what });
    const now = performance.now();
    if (now - this.windowStart > WINDOW_MS) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    this.inWindow++;
    if (this.timer) return;
    if (this.inWindow > BUSY_WRITES) this.timer = setTimeout(() => this.commit(), GATHER_MS);
    else this.commit();
  }

  /** Hands what is gathering to the group commit now (at shutdown, before its last flush). */
  flush(): void {
    if (this.waiting.length > 0) this.commit();
  }

  private commit(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting;
    this.waiting = [];
    groupCommit(this.db)
      .relaxed(() => {
        for (const w of batch) {
          try {
            w.run();
          } catch (err) {
            // A disk error ends the transaction, not only the statement: the rest went with it.
            if (!this.db.inTransaction) throw err;
            this.log.error({ err: (err as Error).message }, `${w.what} not recorded`);
          }
        }
      })
      .catch((err: unknown) =>
        this.log.error(
          { err: (err as Error).message, writes: batch.length },
          `${[...new Set(batch.map((w) => w.what))].join(', ')} not recorded`,
        ),
      );
  }
}
