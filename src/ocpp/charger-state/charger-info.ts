import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import type { BookkeepingWrites } from './bookkeeping-writes.js';
import type { BootInfo } from './reports.js';

/**
 * Each charger's row in `charger_info`: its protocol and when it was last seen (at each
 * connection), what it said at boot. Bookkeeping, not money: the writes join the group commit
 * through bookkeeping-writes.ts.
 */
export class ChargerInfo {
  private prepared?: { touch: Statement; boot: Statement };

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly bookkeeping: BookkeepingWrites,
  ) {}

  connected(chargerId: string, protocol: string): void {
    const at = new Date(this.clock.now()).toISOString();
    this.bookkeeping.add(() => this.statements().touch.run(chargerId, protocol, at), 'last seen');
  }

  booted(chargerId: string, info: BootInfo): void {
    const at = new Date(this.clock.now()).toISOString();
    this.bookkeeping.add(
      () =>
        this.statements().boot.run(
          info.vendor,
          info.model,
          info.serialNumber,
          info.firmwareVersion,
          at,
          at,
          chargerId,
        ),
      'boot',
    );
    this.log.info({ chargerId, vendor: info.vendor, model: info.model }, 'charger booted');
  }

  /** Prepared once, at first use (the charger_info table exists once the database is migrated). */
  private statements(): { touch: Statement; boot: Statement } {
    this.prepared ??= {
      touch: this.db.prepare(
        `INSERT INTO charger_info (charger_id, protocol, last_seen_at) VALUES (?, ?, ?)
         ON CONFLICT (charger_id) DO UPDATE SET protocol = excluded.protocol, last_seen_at = excluded.last_seen_at`,
      ),
      boot: this.db.prepare(
        `UPDATE charger_info SET vendor = ?, model = ?, serial_number = ?, firmware_version = ?,
           booted_at = ?, last_seen_at = ? WHERE charger_id = ?`,
      ),
    };
    return this.prepared;
  }
}
