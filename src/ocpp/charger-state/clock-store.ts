import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../store/database.js';
import type { ClockStore } from './charger-clocks.js';

/**
 * Where charger clock offsets outlive the process. A write is bookkeeping (not money): it joins
 * the next group commit through `later`, and one lost to a power cut costs one estimate.
 */
export function clockStore(
  db: Db,
  clock: Clock,
  later: (write: () => unknown) => void,
): ClockStore {
  const save = db.prepare<[string, number, number, string]>(
    `INSERT INTO charger_clock_offsets (charger_id, offset_ms, epoch, estimated_at)
     VALUES (?, ?, ?, ?)
     ON CONFLICT (charger_id) DO UPDATE SET offset_ms = excluded.offset_ms,
       epoch = excluded.epoch, estimated_at = excluded.estimated_at`,
  );
  return {
    load: () =>
      db
        .prepare<[], { charger_id: string; offset_ms: number; epoch: number }>(
          'SELECT charger_id, offset_ms, epoch FROM charger_clock_offsets',
        )
        .all()
        .map((r) => ({ chargerId: r.charger_id, offsetMs: r.offset_ms, epoch: r.epoch })),
    save: (chargerId, offsetMs, epoch) => {
      const at = new Date(clock.now()).toISOString();
      later(() => save.run(chargerId, Math.round(offsetMs), epoch, at));
    },
  };
}
