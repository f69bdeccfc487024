import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import { relaxed } from '../../store/durability.js';

export interface ChargerDeviation {
  chargerId: string;
  kind: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  /** What the charger sent the first time (the offending value), as JSON. */
  example: unknown;
}

interface Row {
  charger_id: string;
  kind: string;
  count: number;
  first_seen: string;
  last_seen: string;
  example: string | null;
}

/** Longest example kept: a deviation's example is for recognising it, not an archive. */
const EXAMPLE_MAX_CHARS = 500;

function exampleJson(example: unknown): string | null {
  if (example === undefined) return null;
  const json = JSON.stringify(example);
  return json.length <= EXAMPLE_MAX_CHARS ? json : JSON.stringify(json.slice(0, EXAMPLE_MAX_CHARS));
}

/**
 * Deviations from the OCPP schemas that the edge accepted because they do not change a message's
 * meaning, counted per charger and kind, and logged the first time a charger shows a kind. Counts
 * are not money: relaxed durability (store/durability.ts).
 */
export class ChargerDeviations {
  private readonly upsert: Statement<[string, string, string, string, string | null], Row>;
  private readonly byCharger: Statement<[string], Row>;
  private readonly every: Statement<[], Row>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO charger_deviations (charger_id, kind, count, first_seen, last_seen, example)
       VALUES (?, ?, 1, ?, ?, ?)
       ON CONFLICT (charger_id, kind) DO UPDATE SET count = count + 1, last_seen = excluded.last_seen
       RETURNING *`,
    );
    this.byCharger = db.prepare(
      'SELECT * FROM charger_deviations WHERE charger_id = ? ORDER BY kind',
    );
    this.every = db.prepare('SELECT * FROM charger_deviations ORDER BY charger_id, kind');
  }

  record(chargerId: string, kind: string, example: unknown): void {
    const at = new Date(this.clock.now()).toISOString();
    const row = relaxed(this.db, () =>
      this.upsert.get(chargerId, kind, at, at, exampleJson(example)),
    );
    if (row?.count === 1) {
      this.log.info(
        { chargerId, kind, example },
        'charger deviates from the OCPP schema: accepted',
      );
    }
  }

  /** Every deviation of one charger, or of all chargers. */
  read(chargerId?: string): ChargerDeviation[] {
    const rows = chargerId === undefined ? this.every.all() : this.byCharger.all(chargerId);
    return rows.map((r) => ({
      chargerId: r.charger_id,
      kind: r.kind,
      count: r.count,
      firstSeen: r.first_seen,
      lastSeen: r.last_seen,
      example: r.example === null ? null : (JSON.parse(r.example) as unknown),
    }));
  }
}
