import type { Db } from '../../store/database.js';
import { IntervalEnergy } from '../metering/interval-energy.js';
import type { MeterReading } from '../metering/meter-reading.js';

/**
 * A station that meters only interval energy: its register counts from 0 at the transaction's
 * first event and adds each interval, whichever message carries it (a TransactionEvent, or a
 * MeterValues some stations send during a transaction: left out, the session was never stopped),
 * each message's intervals an account of their own (interval-energy.ts).
 */
export function withIntervalRegister(
  db: Db,
  chargerId: string,
  transactionId: string,
  reading: MeterReading | null,
  account: 'transaction' | 'meter-values',
): MeterReading | null {
  if (!reading || reading.energyWh !== null || reading.intervals === undefined) return reading;
  const energyWh = IntervalEnergy.of(db).register(
    chargerId,
    transactionId,
    0,
    reading.timestamp,
    reading.intervals,
    account,
  );
  return { ...reading, energyWh };
}
