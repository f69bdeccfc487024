import { createHash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { isGeneratedKeyHash } from '../ocpp/connection/charger-password.js';
import type { Db } from '../store/database.js';
import type { GatewayConfig } from './schema.js';
import type { ChargerPassword, ChargerSpec, SiteDirectory } from './site.js';

type ConfigCharger = GatewayConfig['chargers'][number];
type Connectors = ChargerSpec['connectors'];

export class ChargerRegistryError extends Error {
  constructor(
    readonly code: 'charger_exists' | 'charger_not_found' | 'unknown_tariff',
    message: string,
  ) {
    super(message);
  }
}

interface ChargerRow {
  id: string;
  security_profile: 1 | 2 | 3;
  connectors: string;
  source: 'config' | 'api';
  config_fingerprint: string | null;
  retired_at: string | null;
}

function fingerprint(c: ConfigCharger): string {
  return createHash('sha256').update(JSON.stringify(c)).digest('hex');
}

/**
 * The site's chargers at runtime. The database holds the effective list (site_chargers,
 * charger_passwords and charger_keys) and the SiteDirectory mirrors it for the hot path. The config file is
 * applied to it at every start, charger by charger, only where its entry changed since the last
 * start: a charger added, re-keyed or retired through the operator API keeps that state until
 * someone edits its entry in the file (docs/operator-api.md, "Which source is authoritative").
 */
export class ChargerRegistry {
  private readonly getStmt: Statement<[string], ChargerRow>;
  private readonly activeStmt: Statement<[], ChargerRow>;
  private readonly insertStmt: Statement<
    [string, number, string, string, string | null, string, string]
  >;
  private readonly updateStmt: Statement<[number, string, string, string | null, string, string]>;
  private readonly retireStmt: Statement<[string, string, string]>;
  private readonly passwordsStmt: Statement<
    [{ id: string; now: number }],
    { password_hash: string; valid_until_ms: number | null; valid_from_ms: number }
  >;
  /** A scrypt hash goes to charger_passwords, a generated key's to charger_keys. */
  private readonly addPassword: (
    chargerId: string,
    hash: string,
    nowMs: number,
    at: string,
  ) => void;
  /** Ends every credential of the charger still valid at `endMs` at that time (both tables). */
  private readonly endPasswords: (endMs: number, chargerId: string) => void;
  /** The same for every credential but `keep` (a stored hash). */
  private readonly endOthers: (endMs: number, chargerId: string, keep: string) => void;
  /** Ends the one credential stored as `hash`. */
  private readonly endOnly: (endMs: number, chargerId: string, hash: string) => void;
  private readonly pushes: {
    add: Statement<[string, string, string]>;
    answer: Statement<[string, string, string, string]>;
    pending: Statement<[string, string], { seq: number }>;
    confirm: Statement<[string, number]>;
  };

  constructor(
    private readonly db: Db,
    private readonly site: SiteDirectory,
  ) {
    this.getStmt = db.prepare('SELECT * FROM site_chargers WHERE id = ?');
    this.activeStmt = db.prepare(
      'SELECT * FROM site_chargers WHERE retired_at IS NULL ORDER BY id',
    );
    this.insertStmt = db.prepare(
      `INSERT INTO site_chargers (id, security_profile, connectors, source, config_fingerprint, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE site_chargers SET security_profile = ?, connectors = ?, source = ?, config_fingerprint = ?,
         updated_at = ? WHERE id = ?`,
    );
    this.retireStmt = db.prepare(
      'UPDATE site_chargers SET retired_at = ?, updated_at = ? WHERE id = ? AND retired_at IS NULL',
    );
    this.passwordsStmt = db.prepare(
      `SELECT password_hash, valid_until_ms, valid_from_ms FROM charger_passwords
       WHERE charger_id = @id AND (valid_until_ms IS NULL OR valid_until_ms > @now)
       UNION ALL
       SELECT key_hash, valid_until_ms, valid_from_ms FROM charger_keys
       WHERE charger_id = @id AND (valid_until_ms IS NULL OR valid_until_ms > @now)`,
    );
    const addPassword = db.prepare<[string, string, number, string]>(
      `INSERT INTO charger_passwords (charger_id, password_hash, valid_from_ms, created_at)
       VALUES (?, ?, ?, ?)`,
    );
    const addKey = db.prepare<[string, string, number, string]>(
      `INSERT INTO charger_keys (charger_id, key_hash, valid_from_ms, created_at)
       VALUES (?, ?, ?, ?)`,
    );
    this.addPassword = (chargerId, hash, nowMs, at) =>
      (isGeneratedKeyHash(hash) ? addKey : addPassword).run(chargerId, hash, nowMs, at);
    const endPasswords = db.prepare<[number, string, number]>(
      `UPDATE charger_passwords SET valid_until_ms = ?
       WHERE charger_id = ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    const endKeys = db.prepare<[number, string, number]>(
      `UPDATE charger_keys SET valid_until_ms = ?
       WHERE charger_id = ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    this.endPasswords = (endMs, chargerId) => {
      endPasswords.run(endMs, chargerId, endMs);
      endKeys.run(endMs, chargerId, endMs);
    };
    const endOtherPasswords = db.prepare<[number, string, string, number]>(
      `UPDATE charger_passwords SET valid_until_ms = ?
       WHERE charger_id = ? AND password_hash != ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    const endOtherKeys = db.prepare<[number, string, string, number]>(
      `UPDATE charger_keys SET valid_until_ms = ?
       WHERE charger_id = ? AND key_hash != ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    this.endOthers = (endMs, chargerId, keep) => {
      endOtherPasswords.run(endMs, chargerId, keep, endMs);
      endOtherKeys.run(endMs, chargerId, keep, endMs);
    };
    const endPassword = db.prepare<[number, string, string, number]>(
      `UPDATE charger_passwords SET valid_until_ms = ?
       WHERE charger_id = ? AND password_hash = ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    const endKey = db.prepare<[number, string, string, number]>(
      `UPDATE charger_keys SET valid_until_ms = ?
       WHERE charger_id = ? AND key_hash = ? AND (valid_until_ms IS NULL OR valid_until_ms > ?)`,
    );
    this.endOnly = (endMs, chargerId, hash) =>
      (isGeneratedKeyHash(hash) ? endKey : endPassword).run(endMs, chargerId, hash, endMs);
    this.pushes = {
      add: db.prepare(
        `INSERT INTO charger_password_pushes (charger_id, password_hash, requested_at)
         VALUES (?, ?, ?)`,
      ),
      answer: db.prepare(
        `UPDATE charger_password_pushes SET answer = ?, answered_at = ?
         WHERE charger_id = ? AND password_hash = ? AND answer IS NULL`,
      ),
      pending: db.prepare(
        `SELECT seq FROM charger_password_pushes WHERE charger_id = ? AND password_hash = ?
         AND confirmed_at IS NULL AND (answer IS NULL OR answer != 'refused')`,
      ),
      confirm: db.prepare('UPDATE charger_password_pushes SET confirmed_at = ? WHERE seq = ?'),
    };
  }

  /**
   * Applies the config file: a new entry adds its charger, a changed one replaces what the
   * database held (its passwordHash becomes the only password, ending any rotated one), an
   * unchanged one leaves the database alone. A config charger missing from the file is not loaded
   * (it comes back with its entry); a retired charger stays retired. Then the directory is loaded.
   */
  syncFromConfig(chargers: readonly ConfigCharger[], nowMs: number): string[] {
    const at = new Date(nowMs).toISOString();
    const listed = new Set(chargers.map((c) => c.id));
    const ignored: string[] = [];
    this.db.transaction(() => {
      for (const c of chargers) {
        const print = fingerprint(c);
        const row = this.getStmt.get(c.id);
        if (row?.retired_at) {
          ignored.push(c.id);
          continue;
        }
        if (row && row.source === 'config' && row.config_fingerprint === print) continue;
        const connectors = JSON.stringify(c.connectors);
        if (row) this.updateStmt.run(c.securityProfile, connectors, 'config', print, at, c.id);
        else this.insertStmt.run(c.id, c.securityProfile, connectors, 'config', print, at, at);
        this.endPasswords(nowMs, c.id);
        if (c.passwordHash !== undefined) this.addPassword(c.id, c.passwordHash, nowMs, at);
      }
    })();
    for (const c of chargers) this.site.remove(c.id);
    for (const row of this.activeStmt.all()) {
      if (row.source === 'config' && !listed.has(row.id)) continue;
      this.site.set(this.spec(row, nowMs));
    }
    return ignored;
  }

  /** Adds a charger at runtime; it is accepted from the next connection on. */
  add(
    spec: { id: string; securityProfile: 1 | 2 | 3; connectors: Connectors },
    passwordHash: string | undefined,
    nowMs: number,
  ): void {
    for (const c of spec.connectors) {
      if (!this.site.hasTariff(c.tariff))
        throw new ChargerRegistryError('unknown_tariff', `no tariff ${c.tariff}`);
    }
    const at = new Date(nowMs).toISOString();
    this.db.transaction(() => {
      const row = this.getStmt.get(spec.id);
      // Also a retired one: an id is never reused, so its history always means one charger.
      if (row) throw new ChargerRegistryError('charger_exists', `charger ${spec.id} exists`);
      const connectors = JSON.stringify(spec.connectors);
      this.insertStmt.run(spec.id, spec.securityProfile, connectors, 'api', null, at, at);
      if (passwordHash !== undefined) this.addPassword(spec.id, passwordHash, nowMs, at);
    })();
    this.refresh(spec.id, nowMs);
  }

  /**
   * A new password from now on; the ones accepted until now stay accepted for `overlapMs` more,
   * so the charger is not refused while it switches over. Returns when the old ones end.
   */
  rotatePassword(
    chargerId: string,
    passwordHash: string,
    overlapMs: number,
    nowMs: number,
  ): string {
    const at = new Date(nowMs).toISOString();
    const endMs = nowMs + overlapMs;
    this.db.transaction(() => {
      this.active(chargerId);
      this.endPasswords(endMs, chargerId);
      this.addPassword(chargerId, passwordHash, nowMs, at);
    })();
    this.refresh(chargerId, nowMs);
    return new Date(endMs).toISOString();
  }

  /**
   * A password about to be set on the charger over OCPP: accepted from now on, next to the ones
   * accepted until now, which stay valid until the charger's answer says what to do with them.
   */
  addPushedPassword(chargerId: string, passwordHash: string, nowMs: number): void {
    const at = new Date(nowMs).toISOString();
    this.db.transaction(() => {
      this.active(chargerId);
      this.addPassword(chargerId, passwordHash, nowMs, at);
      this.pushes.add.run(chargerId, passwordHash, at);
    })();
    this.refresh(chargerId, nowMs);
  }

  /**
   * The charger's answer to a pushed password. Taken: the older credentials end after `overlapMs`
   * (sooner if the charger connects with the new one); returns when. Refused: the pushed one ends
   * now, never having been the charger's. Unanswered: both stay until the charger connects with
   * the new one, since it may have taken it.
   */
  pushAnswered(
    chargerId: string,
    passwordHash: string,
    answer: 'taken' | 'refused' | 'unanswered',
    overlapMs: number,
    nowMs: number,
  ): string | null {
    const at = new Date(nowMs).toISOString();
    const endMs = nowMs + overlapMs;
    this.db.transaction(() => {
      this.pushes.answer.run(answer, at, chargerId, passwordHash);
      if (answer === 'taken') this.endOthers(endMs, chargerId, passwordHash);
      if (answer === 'refused') this.endOnly(nowMs, chargerId, passwordHash);
    })();
    this.refresh(chargerId, nowMs);
    return answer === 'taken' ? new Date(endMs).toISOString() : null;
  }

  /**
   * The charger was admitted with `passwordHash`: when that is a password pushed to it (and not
   * refused), every other credential of the charger ends now.
   */
  credentialUsed(chargerId: string, passwordHash: string, nowMs: number): void {
    const push = this.pushes.pending.get(chargerId, passwordHash);
    if (!push) return;
    this.db.transaction(() => {
      this.endOthers(nowMs, chargerId, passwordHash);
      this.pushes.confirm.run(new Date(nowMs).toISOString(), push.seq);
    })();
    this.refresh(chargerId, nowMs);
  }

  /** The charger is no longer accepted; its history stays. */
  retire(chargerId: string, nowMs: number): void {
    const at = new Date(nowMs).toISOString();
    this.db.transaction(() => {
      this.active(chargerId);
      this.retireStmt.run(at, at, chargerId);
    })();
    this.site.remove(chargerId);
  }

  source(chargerId: string): 'config' | 'api' | undefined {
    return this.getStmt.get(chargerId)?.source;
  }

  private active(chargerId: string): ChargerRow {
    const row = this.getStmt.get(chargerId);
    // Not loaded (retired, or a config charger whose entry left the file): not at this site now.
    if (!row || row.retired_at !== null || !this.site.charger(chargerId))
      throw new ChargerRegistryError('charger_not_found', `no charger with id ${chargerId}`);
    return row;
  }

  private refresh(chargerId: string, nowMs: number): void {
    const row = this.getStmt.get(chargerId);
    if (row) this.site.set(this.spec(row, nowMs));
  }

  private spec(row: ChargerRow, nowMs: number): ChargerSpec {
    // Sorted here: an ORDER BY on the union costs a temporary b-tree per connection.
    const passwords: ChargerPassword[] = this.passwordsStmt
      .all({ id: row.id, now: nowMs })
      .sort((a, b) => a.valid_from_ms - b.valid_from_ms)
      .map((p) => ({ hash: p.password_hash, validUntilMs: p.valid_until_ms }));
    return {
      id: row.id,
      securityProfile: row.security_profile,
      passwords,
      connectors: JSON.parse(row.connectors) as Connectors,
    };
  }
}
