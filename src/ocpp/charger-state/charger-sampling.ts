import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import type { ChargerReply } from '../port.js';

/** What the central system does about a charger whose sampling did not take. */
export interface SamplingActions {
  /** A soft reset (1.6 Soft, 2.0.1 OnIdle), so that a value awaiting a reboot takes. */
  reset(): Promise<ChargerReply>;
  note(note: string): void;
}

/**
 * Chargers that will not sample a transaction's energy as the gateway asked (sampling-gap.ts): a
 * Start there is refused (`charger_unmetered`) until a later read shows the setting held. An idle
 * charger is soft-reset once so that a value awaiting a reboot takes, and is read again at its
 * next boot.
 *
 * The reset is remembered in memory, not in the database: what it bounds is a loop within one
 * process (every reconnect reads the settings again); a gateway restart costs at most one more
 * reset of an idle charger, while the verdict that refuses Starts is kept in `charger_sampling`.
 */
export class ChargerSampling {
  private readonly upsert: Statement<[string, string, string]>;
  private readonly remove: Statement<[string]>;
  private readonly byCharger: Statement<[string], { reason: string }>;
  /** Chargers reset for their sampling whose sampling has not held since. */
  private readonly resetSent = new Set<string>();

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO charger_sampling (charger_id, reason, recorded_at) VALUES (?, ?, ?)
       ON CONFLICT (charger_id) DO UPDATE SET reason = excluded.reason, recorded_at = excluded.recorded_at`,
    );
    this.remove = db.prepare('DELETE FROM charger_sampling WHERE charger_id = ?');
    this.byCharger = db.prepare('SELECT reason FROM charger_sampling WHERE charger_id = ?');
  }

  /** Why a paid session on the charger could not be watched now, or null. */
  gap(chargerId: string): string | null {
    return this.byCharger.get(chargerId)?.reason ?? null;
  }

  /** Every reconnect of a reconnect storm comes here: a read, and a write only on a change. */
  held(chargerId: string, actions: SamplingActions): void {
    this.resetSent.delete(chargerId);
    if (this.gap(chargerId) === null) return;
    this.remove.run(chargerId);
    this.log.info({ chargerId }, 'charger sampling holds: paid sessions allowed again');
    actions.note('sampling holds: Starts allowed again');
  }

  /**
   * Recorded before any reset, so that no Start slips in while the charger reboots. `idle`: a
   * soft reset would cut no transaction (the adapter's judgement: 1.6 Soft ends them).
   */
  async notHeld(
    chargerId: string,
    reason: string,
    idle: boolean,
    actions: SamplingActions,
  ): Promise<void> {
    if (this.gap(chargerId) !== reason) {
      this.upsert.run(chargerId, reason, new Date(this.clock.now()).toISOString());
      this.log.warn({ chargerId, reason }, 'charger cannot watch a paid session: Starts refused');
      actions.note(`cannot watch a paid session: ${reason}`);
    }
    if (!idle || this.resetSent.has(chargerId)) return;
    this.resetSent.add(chargerId);
    const reply = await actions.reset();
    actions.note(`soft reset so that the sampling asked for takes: ${reply.status}`);
  }
}
