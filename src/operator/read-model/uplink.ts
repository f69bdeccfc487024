import type { Db } from '../../store/database.js';
import { bind, where, type Page } from './query.js';

/** An outbox row as the operator sees it (its payload's type, not the payload). */
interface OutboxRow {
  seq: number;
  id: string;
  topic: string;
  type: string;
  createdAt: string;
  sentAt: string | null;
}

/** The outbox: what went up (or waits to) on the uplink. */
export class UplinkReads {
  constructor(private readonly db: Db) {}

  /** The uplink messages about a session (its ledger entries and state events). */
  forSession(
    sessionId: string,
  ): { seq: number; topic: string; type: string; createdAt: string; sentAt: string | null }[] {
    return this.db
      .prepare(
        `SELECT seq, topic, json_extract(payload, '$.type') AS type, created_at AS createdAt,
           sent_at AS sentAt FROM outbox
         WHERE json_extract(payload, '$.sessionId') = @id
            OR json_extract(payload, '$.entry.sessionId') = @id
            OR json_extract(payload, '$.session.id') = @id
         ORDER BY seq`,
      )
      .all({ id: sessionId }) as ReturnType<UplinkReads['forSession']>;
  }

  outbox(pendingOnly: boolean, before: number | undefined, limit: number): Page<OutboxRow> {
    const parts: string[] = [];
    const params: Record<string, unknown> = { limit };
    if (pendingOnly) parts.push('sent_at IS NULL');
    bind(params, parts, 'seq < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT seq, id, topic, json_extract(payload, '$.type') AS type, created_at AS createdAt,
           sent_at AS sentAt FROM outbox ${where(parts)} ORDER BY seq DESC LIMIT @limit`,
      )
      .all(params) as OutboxRow[];
    const last = rows.at(-1);
    return { items: rows, nextCursor: rows.length === limit && last ? String(last.seq) : null };
  }

  byTopic(): { topic: string; pending: number; sent: number }[] {
    return this.db
      .prepare(
        `SELECT topic, sum(sent_at IS NULL) AS pending, sum(sent_at IS NOT NULL) AS sent
         FROM outbox GROUP BY topic ORDER BY topic`,
      )
      .all() as { topic: string; pending: number; sent: number }[];
  }
}
