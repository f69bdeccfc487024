import { groupCommit } from '../../../store/group-commit.js';
import type { StartTransactionReq } from '../messages.js';
import { unroundedMeterStart } from '../normalize.js';
import type { ConnectionContext16 } from '../connection-context.js';
import { idTagStatus } from '../id-tag-status.js';
import type { TokenVerdict } from '../../port.js';

/** Answered once durable, its commit shared with the turn's other writes. */
export function startTransaction(conn: ConnectionContext16, req: StartTransactionReq) {
  return groupCommit(conn.ctx.db).strict(() => start(conn, req));
}

function start(
  { ctx, transactions, connectorIdOf }: ConnectionContext16,
  req: StartTransactionReq,
) {
  const chargerId = ctx.chargerId;
  const repeat = transactions.findRepeat(
    chargerId,
    req.connectorId,
    req.idTag,
    req.meterStart,
    req.timestamp,
  );
  if (repeat) {
    ctx.reports.noted('StartTransaction', 'repeated start answered again', {
      transactionId: repeat.id,
    });
    return {
      transactionId: repeat.id,
      idTagInfo: { status: repeat.accepted ? 'Accepted' : 'Invalid' },
    };
  }
  const id = transactions.open(
    chargerId,
    req.connectorId,
    req.idTag,
    req.meterStart,
    req.timestamp,
  );
  const connectorId = connectorIdOf(req.connectorId);
  let verdict: TokenVerdict = { accepted: false };
  if (connectorId) {
    const receivedAtMs = ctx.clock.now();
    const time = ctx.clocks.observe(chargerId, req.timestamp, receivedAtMs);
    const unrounded = unroundedMeterStart(req);
    verdict = ctx.events().transactionStarted({
      chargerId,
      connectorId,
      idToken: req.idTag,
      transactionRef: String(id),
      meterStartWh: req.meterStart,
      ...(unrounded !== undefined && { meterStartUnrounded: unrounded }),
      timestamp: req.timestamp,
      receivedAtMs,
      time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
      // Made before this connection opened: offline, however soon the charger came back.
      live: time.live && !ctx.clocks.madeBeforeConnection(chargerId, time.atMs),
    });
  }
  const accepted = verdict.accepted;
  transactions.setAccepted(id, accepted);
  if (!accepted) {
    ctx.reports.noted('StartTransaction', 'transaction not started by us: Invalid', {
      transactionId: id,
      connectorId: req.connectorId,
    });
  }
  return { transactionId: id, idTagInfo: { status: idTagStatus(verdict) } };
}
