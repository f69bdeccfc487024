import type { Statement } from 'better-sqlite3';
import type { ChargerEventListener } from '../charging/charger-event-dispatcher.js';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import type { ConsoleEventHub } from './event-hub.js';

interface SessionRef {
  id: string;
  meter_start_wh: number | null;
}

/**
 * The chargers' events as the console's hub tells them to the browsers. A meter sample is sent
 * with the energy of its session so far, which needs the session's start register: one indexed
 * read per sample.
 */
export function consoleFeed(hub: ConsoleEventHub, db: Db): ChargerEventListener {
  let sessionStmt: Statement<[string, string], SessionRef> | undefined;
  const sessionOf = (chargerId: string, transactionRef: string) =>
    (sessionStmt ??= db.prepare(
      'SELECT id, meter_start_wh FROM sessions WHERE charger_id = ? AND transaction_ref = ?',
    )).get(chargerId, transactionRef);
  return {
    meterSample: (sample) => {
      if (!sample.live || hub.clients === 0) return;
      const session =
        sample.transactionRef === null
          ? undefined
          : sessionOf(sample.chargerId, sample.transactionRef);
      const start = session?.meter_start_wh ?? null;
      hub.publish('meter.sample', {
        chargerId: sample.chargerId,
        connectorId: sample.connectorId,
        sessionId: session?.id ?? null,
        transactionRef: sample.transactionRef,
        powerW: sample.powerW,
        registerWh: sample.energyWh,
        sessionEnergyWh:
          start === null || sample.energyWh === null ? null : Math.max(0, sample.energyWh - start),
        socPercent: sample.socPercent,
        timestamp: sample.timestamp,
        receivedAt: new Date(sample.receivedAtMs).toISOString(),
      });
    },
    chargerOnline: (chargerId) => hub.publish('charger.online', { chargerId }),
    chargerBooted: (chargerId) => hub.publish('charger.booted', { chargerId }),
    connectorStatus: (chargerId, connectorId, status) =>
      hub.publish('connector.status', { chargerId, connectorId, status }),
  };
}

interface OutboxRow {
  seq: number;
  topic: string;
  payload: string;
}

/**
 * Session state changes and ledger entries, as the outbox has them: every writer of money
 * (sessions, operator, uplink) writes its change and the outbox row in one transaction, so
 * reading the outbox after each enqueue sees exactly the committed changes, in order, whoever
 * made them. The read waits for setImmediate: the enqueue is told before the commit.
 */
export function tailOutbox(outbox: Outbox, db: Db, hub: ConsoleEventHub): void {
  const maxStmt = db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM outbox');
  const newer = db.prepare<[number], OutboxRow>(
    "SELECT seq, topic, payload FROM outbox WHERE seq > ? AND topic IN ('ledger', 'sessions') ORDER BY seq",
  );
  let last = maxStmt.get()?.seq ?? 0;
  let scheduled = false;
  const read = () => {
    scheduled = false;
    // A write in the gateway's last turn (the group commit's flush at close) is told after the
    // database may have been closed: nobody is listening by then.
    if (!db.open) return;
    if (hub.clients === 0) {
      last = maxStmt.get()?.seq ?? last;
      return;
    }
    for (const row of newer.all(last)) {
      last = row.seq;
      const payload = JSON.parse(row.payload) as Record<string, unknown>;
      // The outbox's own id and type are for the uplink's receiver; the event name says the type.
      delete payload.id;
      delete payload.type;
      hub.publish(row.topic === 'ledger' ? 'ledger.entry' : 'session.state', payload);
    }
  };
  outbox.onEnqueue(() => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(read);
  });
}
