import type { Db } from '../../store/database.js';
import { ChargerReads } from './chargers.js';
import { LedgerReads } from './ledger.js';
import { LossReads } from './losses.js';
import { RosterReads } from './roster.js';
import { SessionReads } from './sessions.js';
import { UplinkReads } from './uplink.js';

/**
 * The operator's reads of the site, straight from SQLite (read-only), one part per resource.
 * Pages run newest first on an immutable key (a session's rowid, a ledger entry's seq), so a page
 * boundary never moves as new rows arrive.
 */
export class SiteReadModel {
  readonly chargers: ChargerReads;
  readonly sessions: SessionReads;
  readonly ledger: LedgerReads;
  readonly roster: RosterReads;
  readonly uplink: UplinkReads;
  readonly losses: LossReads;

  constructor(db: Db) {
    this.chargers = new ChargerReads(db);
    this.sessions = new SessionReads(db);
    this.ledger = new LedgerReads(db);
    this.roster = new RosterReads(db);
    this.uplink = new UplinkReads(db);
    this.losses = new LossReads(db, this.sessions);
  }
}
