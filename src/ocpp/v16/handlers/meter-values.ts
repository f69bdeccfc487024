import { reportReading } from '../../report-reading.js';
import type { MeterValuesReq } from '../messages.js';
import { latestReading } from '../meter-values.js';
import { isPlaceholderId, queued } from '../queued.js';
import type { Session16 } from '../session-context.js';

export function meterValues(session: Session16, req: MeterValuesReq) {
  const { ctx } = session;
  const connectorId = session.connectorIdOf(req.connectorId);
  const reading = latestReading(req.meterValue);
  if (!connectorId || !reading) return {};
  const tx = req.transactionId === undefined ? undefined : meterTransaction(session, req);
  if (req.transactionId !== undefined && !tx) {
    ctx.reports.noted('MeterValues', 'unknown transactionId', {
      transactionId: req.transactionId,
    });
  }
  const live = !queued(reading.timestamp, ctx.clock.now());
  reportReading(ctx, connectorId, reading, tx ? String(tx.id) : null, live);
  return {};
}

/** The transaction a MeterValues names, or (id 0 / -1) the only one open on its connector. */
function meterTransaction({ ctx, transactions }: Session16, req: MeterValuesReq) {
  const id = req.transactionId as number;
  if (!isPlaceholderId(id)) return transactions.get(id, ctx.chargerId);
  const tx = transactions.resolveUnknown(ctx.chargerId, { connector: req.connectorId });
  if (tx) {
    ctx.reports.noted('MeterValues', `transactionId ${id} taken as ${tx.id}`, {
      connectorId: req.connectorId,
    });
  }
  return tx;
}
