import { groupCommit } from '../../../store/group-commit.js';
import { reportReading } from '../../metering/report-reading.js';
import type { MeterValuesReq } from '../messages.js';
import { latestReading } from '../meter-values.js';
import { isPlaceholderId } from '../placeholder-id.js';
import type { ConnectionContext16 } from '../connection-context.js';
import type { Transaction16 } from '../transactions.js';

/**
 * Meter samples, in whatever shape the charger sends them: on the connector or on connector 0
 * (the charger's own meter), with the transaction's id, a placeholder id or none; a register, or
 * only interval energy (summed into a register from the transaction's meterStart).
 */
export function meterValues(conn: ConnectionContext16, req: MeterValuesReq) {
  // One transaction per turn for every sample that arrived in it (group commit, relaxed tier).
  return groupCommit(conn.ctx.db).relaxed(() => sample(conn, req));
}

function sample(conn: ConnectionContext16, req: MeterValuesReq) {
  const { ctx } = conn;
  const reading = latestReading(req.meterValue);
  if (!reading) return {};
  const tx = meterTransaction(conn, req, reading.energyLocation === undefined);
  const connectorId = conn.connectorIdOf(tx?.connector ?? req.connectorId);
  if (!connectorId) return {};
  const energyWh =
    reading.energyWh ??
    (tx && reading.intervals !== undefined
      ? conn.intervals.register(
          ctx.chargerId,
          String(tx.id),
          tx.meterStart,
          reading.timestamp,
          reading.intervals,
        )
      : null);
  // 1.6 has no offline flag: the charger's clock offset tells a replayed queue (charger-clocks.ts).
  reportReading(ctx, connectorId, { ...reading, energyWh }, tx ? String(tx.id) : null, undefined);
  return {};
}

/**
 * The transaction a MeterValues belongs to: the one it names, or (id 0 / -1, or no id at all) the
 * only one open where it was measured: on its connector, or anywhere on the charger for connector
 * 0. More than one open there is ambiguous: recorded, not guessed. Connector 0 energy metered
 * away from the Outlet (`atOutlet` false) is the charger's grid-side meter, no connector's
 * register: not guessed either.
 */
function meterTransaction(
  { ctx, transactions }: ConnectionContext16,
  req: MeterValuesReq,
  atOutlet: boolean,
): Transaction16 | undefined {
  const id = req.transactionId;
  if (id !== undefined && !isPlaceholderId(id)) {
    const tx = transactions.get(id, ctx.chargerId);
    if (!tx) ctx.reports.noted('MeterValues', 'unknown transactionId', { transactionId: id });
    return tx;
  }
  if (req.connectorId === 0 && !atOutlet) return undefined;
  const hint = req.connectorId === 0 ? {} : { connector: req.connectorId };
  const open = transactions.candidates(ctx.chargerId, hint);
  const tx = open.length === 1 && open[0]?.accepted ? open[0] : undefined;
  const named = id === undefined ? 'no transactionId' : `transactionId ${id}`;
  if (tx) {
    ctx.reports.noted('MeterValues', `${named} taken as ${tx.id}`, {
      connectorId: req.connectorId,
    });
  } else if (open.length > 1 || id !== undefined) {
    ctx.reports.noted('MeterValues', `${named}: no single open transaction, not attributed`, {
      connectorId: req.connectorId,
    });
  }
  return tx;
}
