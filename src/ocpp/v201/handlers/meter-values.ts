import { reportReading } from '../../report-reading.js';
import type { MeterValuesReq } from '../messages.js';
import { latestReading201 } from '../meter-values.js';
import type { Session201 } from '../session-context.js';

export function meterValues({ ctx, connectorIdOf }: Session201, req: MeterValuesReq) {
  const connectorId = connectorIdOf(req.evseId);
  const reading = latestReading201(req.meterValue);
  if (!connectorId || !reading) return {};
  // Outside a transaction (2.0.1 sends transaction meter data in TransactionEvent).
  reportReading(ctx, connectorId, reading, null, false);
  return {};
}
