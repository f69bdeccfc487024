import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import type { KeyedEntry } from './list-plan.js';

interface Row {
  token_key: string;
  token_value: string;
  token_type: string;
  expires_at: string | null;
  blocked: number;
  active: number;
  fleet_id: string;
  balance: number;
}

/**
 * What every charger's list should hold now: each bound, unexpired token, Accepted when it is not
 * blocked, its driver is active and its wallet holds at least the fleet's tap minimum, else
 * Blocked (so a charger refuses it offline rather than treat it as unknown). Unbound and expired
 * tokens are not on it. One read of the site's bound tokens with their drivers and wallets.
 */
export class WantedList {
  private readonly stmt: Statement<[], Row>;
  private readonly anyStmt: Statement<[], { one: number }>;

  constructor(
    db: Db,
    /** The least balance (whole NGN) a wallet of this fleet needs to pay a tap. */
    private readonly minimumFor: (fleetId: string) => number,
  ) {
    this.stmt = db.prepare(
      `SELECT t.token_key, t.token_value, t.token_type, t.expires_at,
         t.blocked_at IS NOT NULL AS blocked, d.active, d.fleet_id, w.balance
       FROM id_tokens t
       JOIN drivers d ON d.id = t.driver_id
       JOIN wallets w ON w.driver_id = t.driver_id
       WHERE t.unbound_at IS NULL`,
    );
    this.anyStmt = db.prepare('SELECT 1 AS one FROM id_tokens LIMIT 1');
  }

  /** Whether a token was ever bound: a site that has none sends no charger anything. */
  anyBound(): boolean {
    return this.anyStmt.get() !== undefined;
  }

  read(nowMs: number): KeyedEntry[] {
    const out: KeyedEntry[] = [];
    for (const r of this.stmt.all()) {
      if (r.expires_at !== null && Date.parse(r.expires_at) <= nowMs) continue;
      const payable = r.blocked === 0 && r.active === 1 && r.balance >= this.minimumFor(r.fleet_id);
      out.push({
        key: r.token_key,
        value: r.token_value,
        type: r.token_type,
        status: payable ? 'accepted' : 'blocked',
        expiresAt: r.expires_at === null ? null : new Date(Date.parse(r.expires_at)).toISOString(),
      });
    }
    return out;
  }
}
