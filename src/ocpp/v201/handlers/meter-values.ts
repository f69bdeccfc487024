import { groupCommit } from '../../../store/group-commit.js';
import { reportReading } from '../../metering/report-reading.js';
import type { MeterValuesReq } from '../messages.js';
import { withIntervalRegister } from '../interval-register.js';
import { latestReading201 } from '../meter-values.js';
import type { ConnectionContext201 } from '../connection-context.js';

/**
 * Meter samples outside TransactionEvent. 2.0.1 sends a transaction's meter data in its events,
 * but some stations send MeterValues during one too: they name no transaction, so they are the
 * one going on at their EVSE. evseId 0, the station's own meter, is no connector's register (no
 * site connector has OCPP id 0: config/read-config.ts). No offline flag either: as for 1.6, the
 * charger's clock offset tells a replay (charger-clocks.ts).
 */
export function meterValues(conn: ConnectionContext201, req: MeterValuesReq) {
  // Committed with the turn's other writes, as a 1.6 sample is (group commit, relaxed tier).
  return groupCommit(conn.ctx.db).relaxed(() => sample(conn, req));
}

function sample({ ctx, txs, connectorIdOf }: ConnectionContext201, req: MeterValuesReq) {
  const connectorId = connectorIdOf(req.evseId);
  const sampled = latestReading201(req.meterValue);
  if (!connectorId || !sampled) return {};
  const tx = txs.openOn(ctx.chargerId, req.evseId);
  const ref = tx?.verdict === 'accepted' ? tx.transactionId : null;
  const reading = ref
    ? withIntervalRegister(ctx.db, ctx.chargerId, ref, sampled, 'meter-values')
    : sampled;
  if (!reading) return {};
  reportReading(ctx, connectorId, reading, ref, undefined);
  return {};
}
