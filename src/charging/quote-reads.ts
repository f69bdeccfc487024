import { performance } from 'node:perf_hooks';
import type { Statement } from 'better-sqlite3';
import { toDriver, type Driver, type DriverRow } from '../fleet/roster.js';
import type { TelematicsSoc } from '../fleet/telematics.js';
import type { Db } from '../store/database.js';
import { OPEN_STATE } from './session-store.js';
import { onQuoteChanges } from './quote-changes.js';

/** What a quote knows of its driver before it looks at the connector. */
export interface QuoteDriver {
  driver: Driver;
  /** Null when the driver has no wallet (the quote then fails as wallet.balance() would). */
  balance: number | null;
  /** The fleet's last telematics SoC of the driver's vehicle, however old. */
  telematics: TelematicsSoc | undefined;
  /** The session open on the quoted connector, if any (at most one: a unique index). */
  openSession: OpenSessionRef | null;
}

/** Who holds a connector: enough to tell its own driver which session it is. */
export interface OpenSessionRef {
  id: string;
  driverId: string;
}

interface Row extends DriverRow {
  balance: number | null;
  soc_percent: number | null;
  measured_at: string | null;
  open_session_id: string | null;
  open_session_driver_id: string | null;
}

/** What a quote reads of its driver, apart from the connector. */
type DriverPart = Omit<QuoteDriver, 'openSession'>;

/** How long an answer may be served without asking whether another process wrote (`seed`). */
const OTHER_WRITERS_RECHECK_MS = 100;
/** Bounds each memo: a site's drivers and connectors fit; a flood of unknown keys cannot grow it. */
const MAX_ENTRIES = 10_000;

/**
 * The driver's row, wallet balance, telematics SoC and the session open on the quoted connector,
 * read only. A quote is the API's hottest path, and the read was most of its cost: each SQLite
 * statement outside a transaction opens and closes its own read, two file-lock system calls, the
 * dearest part of a read on a machine whose system calls are dear (docs/benchmarks.md).
 *
 * So what was read is kept, per driver and per connector, and forgotten the moment a write on this
 * connection touches it: TEMP triggers on the four tables call back into this process inside the
 * writing statement (quote-changes.ts), whatever code path wrote. Nothing is kept that was read
 * inside an open transaction (it could still roll back). Another process writing the same database
 * (`seed` on a live gateway) is seen through `PRAGMA data_version`, asked at most every 100 ms
 * while quotes are answered: its changes reach quotes within that. A quote never moves money; the
 * Start reads the wallet again in its own transaction.
 */
export class QuoteReads {
  private readonly stmt: Statement<[{ driver: string; charger: string; connector: string }], Row>;
  private readonly dataVersion: Statement<[], number>;
  private readonly drivers = new Map<string, DriverPart>();
  private readonly connectors = new Map<string, OpenSessionRef | null>();
  private version: number;
  private checkedAt = performance.now();

  /** `recheckMs`: how long an answer may be served before asking `PRAGMA data_version` again. */
  constructor(
    private readonly db: Db,
    private readonly recheckMs = OTHER_WRITERS_RECHECK_MS,
  ) {
    this.stmt = db.prepare(
      // Scalar subqueries, not LEFT JOINs: the joined form measured 13 µs a read, this 2 µs.
      `SELECT d.*,
         (SELECT balance FROM wallets WHERE driver_id = d.id) AS balance,
         (SELECT soc_percent FROM driver_telematics WHERE driver_id = d.id) AS soc_percent,
         (SELECT measured_at FROM driver_telematics WHERE driver_id = d.id) AS measured_at,
         (SELECT id FROM sessions WHERE charger_id = @charger AND connector_id = @connector AND ${OPEN_STATE})
           AS open_session_id,
         (SELECT driver_id FROM sessions WHERE charger_id = @charger AND connector_id = @connector AND ${OPEN_STATE})
           AS open_session_driver_id
       FROM drivers d WHERE d.id = @driver`,
    );
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.dataVersion.get() ?? 0;
    onQuoteChanges(db, {
      driverChanged: (driverId) => this.drivers.delete(driverId),
      connectorChanged: (chargerId, connectorId) =>
        this.connectors.delete(connectorKey(chargerId, connectorId)),
    });
  }

  read(driverId: string, chargerId: string, connectorId: string): QuoteDriver | undefined {
    const key = connectorKey(chargerId, connectorId);
    // A hit is right inside a transaction too: a write in it that touched these rows has already
    // forgotten them. Only what is read inside one is not kept (it may still roll back).
    this.forgetOtherWriters();
    const cachedDriver = this.drivers.get(driverId);
    const cachedSession = this.connectors.get(key);
    if (cachedDriver !== undefined && cachedSession !== undefined)
      return { ...cachedDriver, openSession: cachedSession };
    const row = this.stmt.get({ driver: driverId, charger: chargerId, connector: connectorId });
    if (!row) return undefined;
    const driver: DriverPart = {
      driver: toDriver(row),
      balance: row.balance,
      telematics:
        row.soc_percent === null || row.measured_at === null
          ? undefined
          : { socPercent: row.soc_percent, measuredAt: row.measured_at },
    };
    const openSession =
      row.open_session_id === null || row.open_session_driver_id === null
        ? null
        : { id: row.open_session_id, driverId: row.open_session_driver_id };
    if (!this.db.inTransaction) {
      bounded(this.drivers, driverId, driver);
      bounded(this.connectors, key, openSession);
    }
    return { ...driver, openSession };
  }

  private forgetOtherWriters(): void {
    const now = performance.now();
    if (now - this.checkedAt < this.recheckMs) return;
    this.checkedAt = now;
    const version = this.dataVersion.get() ?? 0;
    if (version === this.version) return;
    this.version = version;
    this.drivers.clear();
    this.connectors.clear();
  }
}

function connectorKey(chargerId: string, connectorId: string): string {
  return `${chargerId}\u0000${connectorId}`;
}

function bounded<V>(map: Map<string, V>, key: string, value: V): void {
  // The oldest entry goes first (a Map iterates in insertion order).
  if (map.size >= MAX_ENTRIES && !map.has(key)) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
