import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { Tariff, type PriceInForce, type TariffSpec } from '../pricing/tariff.js';

export type TariffSource = 'config' | 'database';

export interface TariffRecord {
  id: string;
  version: number;
  spec: TariffSpec;
  setBy: string;
  setAt: string;
}

/** The price a Start fixes, with where it came from (recorded with the session). */
export interface TariffPrice extends PriceInForce {
  tariffId: string;
  version: number;
}

export class TariffBookError extends Error {
  constructor(
    readonly code: 'tariffs_in_config' | 'invalid_tariff',
    message: string,
  ) {
    super(message);
  }
}

interface Row {
  tariff_id: string;
  version: number;
  spec: string | null;
  set_by: string;
  set_at: string;
}

interface Entry {
  record: TariffRecord;
  tariff: Tariff;
  /** The last price read, for the span it holds (a quote per second need not look ahead again). */
  cached: { fromMs: number; price: PriceInForce } | null;
}

/** Compares specs as the API gives them back (key order and defaults do not make a difference). */
const sameSpec = (a: TariffSpec, b: TariffSpec) =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

function canonical(spec: TariffSpec): TariffSpec {
  return {
    pricePerKwh: spec.pricePerKwh,
    windows: spec.windows.map((w) => ({
      days: [...w.days],
      from: w.from,
      to: w.to,
      pricePerKwh: w.pricePerKwh,
    })),
  };
}

/**
 * The site's tariffs: the current version of each, kept in memory and written through to
 * tariff_versions (append-only). A price is read at the instant it is needed; a session keeps the
 * one read at its Start.
 */
export class TariffBook {
  private readonly current = new Map<string, Entry>();
  private readonly latestStmt: Statement<[], Row>;
  private readonly versionStmt: Statement<[string], { version: number | null }>;
  private readonly insertStmt: Statement<[string, number, string | null, string, string]>;

  constructor(
    private readonly db: Db,
    private readonly timeZone: string,
    readonly source: TariffSource,
  ) {
    this.latestStmt = db.prepare(
      `SELECT t.* FROM tariff_versions t
       WHERE t.version = (SELECT MAX(version) FROM tariff_versions WHERE tariff_id = t.tariff_id)
       ORDER BY t.tariff_id`,
    );
    this.versionStmt = db.prepare(
      'SELECT MAX(version) AS version FROM tariff_versions WHERE tariff_id = ?',
    );
    this.insertStmt = db.prepare(
      'INSERT INTO tariff_versions (tariff_id, version, spec, set_by, set_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.reload();
  }

  private reload(): void {
    this.current.clear();
    for (const row of this.latestStmt.all()) {
      if (row.spec === null) continue;
      const spec = JSON.parse(row.spec) as TariffSpec;
      this.current.set(row.tariff_id, {
        record: {
          id: row.tariff_id,
          version: row.version,
          spec,
          setBy: row.set_by,
          setAt: row.set_at,
        },
        tariff: new Tariff(spec, this.timeZone),
        cached: null,
      });
    }
  }

  /**
   * Brings the config file's tariffs in. `config` source: the file wins, every tariff it does not
   * name is deleted. `database` source: only ids the database never held are added; the others
   * keep what the operator set, and those that differ from the file are returned (to be logged).
   */
  seed(fromConfig: Readonly<Record<string, TariffSpec>>, at: string): { differs: string[] } {
    const differs: string[] = [];
    this.db.transaction(() => {
      for (const [id, spec] of Object.entries(fromConfig)) {
        const held = this.current.get(id);
        if (this.source === 'config') {
          if (!held || !sameSpec(held.record.spec, spec)) this.write(id, spec, 'config file', at);
        } else if (this.versionStmt.get(id)?.version == null) {
          this.write(id, spec, 'config file', at);
        } else if (held && !sameSpec(held.record.spec, spec)) {
          differs.push(id);
        }
      }
      if (this.source === 'config') {
        for (const id of this.current.keys())
          if (!Object.hasOwn(fromConfig, id)) this.write(id, null, 'config file', at);
      }
    })();
    this.reload();
    return { differs };
  }

  has(id: string): boolean {
    return this.current.has(id);
  }

  list(): TariffRecord[] {
    return [...this.current.values()].map((e) => e.record);
  }

  get(id: string): TariffRecord | undefined {
    return this.current.get(id)?.record;
  }

  /** The price of tariff `id` at `ms`; undefined when there is no such tariff. */
  priceAt(id: string, ms: number): TariffPrice | undefined {
    const entry = this.current.get(id);
    if (!entry) return undefined;
    const c = entry.cached;
    let price: PriceInForce;
    if (c && ms >= c.fromMs && (c.price.untilMs === null || ms < c.price.untilMs)) price = c.price;
    else {
      price = entry.tariff.at(ms);
      entry.cached = { fromMs: ms, price };
    }
    return { ...price, tariffId: id, version: entry.record.version };
  }

  /** Creates or replaces tariff `id` (a new version); refused while the config file holds them. */
  put(id: string, spec: TariffSpec, by: string, at: string): TariffRecord {
    this.writable();
    try {
      new Tariff(spec, this.timeZone);
    } catch (err) {
      throw new TariffBookError('invalid_tariff', (err as Error).message);
    }
    this.db.transaction(() => this.write(id, canonical(spec), by, at))();
    this.reload();
    return this.get(id) as TariffRecord;
  }

  /** Deletes tariff `id`; false when there was none. The caller checks no connector uses it. */
  remove(id: string, by: string, at: string): boolean {
    this.writable();
    if (!this.current.has(id)) return false;
    this.db.transaction(() => this.write(id, null, by, at))();
    this.reload();
    return true;
  }

  private writable(): void {
    if (this.source === 'config') {
      throw new TariffBookError(
        'tariffs_in_config',
        'tariffs are kept in the config file (pricing.tariffSource: config): change them there',
      );
    }
  }

  private write(id: string, spec: TariffSpec | null, by: string, at: string): void {
    const version = (this.versionStmt.get(id)?.version ?? 0) + 1;
    this.insertStmt.run(
      id,
      version,
      spec === null ? null : JSON.stringify(canonical(spec)),
      by,
      at,
    );
  }
}
