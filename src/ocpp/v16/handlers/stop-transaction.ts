import { groupCommit } from '../../../store/group-commit.js';
import type { StopTransactionReq } from '../messages.js';
import { latestReading } from '../meter-values.js';
import { isPlaceholderId } from '../placeholder-id.js';
import type { ConnectionContext16 } from '../connection-context.js';

/** A settlement: answered once durable, its commit shared with the turn's other writes. */
export function stopTransaction(conn: ConnectionContext16, req: StopTransactionReq) {
  return groupCommit(conn.ctx.db).strict(() => stop(conn, req));
}

function stop({ ctx, transactions }: ConnectionContext16, req: StopTransactionReq) {
  const chargerId = ctx.chargerId;
  const tx = isPlaceholderId(req.transactionId)
    ? transactions.resolveUnknown(chargerId, req.idTag === undefined ? {} : { idTag: req.idTag })
    : transactions.get(req.transactionId, chargerId);
  if (tx && tx.id !== req.transactionId) {
    ctx.reports.noted('StopTransaction', `transactionId ${req.transactionId} taken as ${tx.id}`, {
      idTag: req.idTag ?? null,
    });
  }
  if (!tx) {
    // Never block a charger's queue: answer, and keep the message for the operator.
    ctx.reports.noted('StopTransaction', 'unknown transactionId', req);
    return {};
  }
  const reason = req.reason ?? 'Local';
  if (!transactions.stop(tx.id, req.meterStop, req.timestamp, reason)) {
    ctx.reports.noted('StopTransaction', 'repeated stop answered again', {
      transactionId: tx.id,
    });
  }
  const final = req.transactionData ? latestReading(req.transactionData) : null;
  const receivedAtMs = ctx.clock.now();
  const time = ctx.clocks.observe(chargerId, req.timestamp, receivedAtMs);
  ctx.events().transactionEnded({
    chargerId,
    transactionRef: String(tx.id),
    meterStopWh: Number.isSafeInteger(req.meterStop) ? req.meterStop : (final?.energyWh ?? null),
    reason,
    timestamp: req.timestamp,
    receivedAtMs,
    time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
    live: time.live,
  });
  return req.idTag ? { idTagInfo: { status: 'Accepted' } } : {};
}
