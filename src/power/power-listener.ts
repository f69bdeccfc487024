import type { ChargerEventListener } from '../charging/charger-event-dispatcher.js';
import type { Session } from '../charging/session-store.js';
import type {
  MeterSample,
  TokenVerdict,
  TransactionEnded,
  TransactionStarted,
} from '../ocpp/port.js';
import type { LoadManager } from './load-manager.js';

/** What the site's power manager does when it hears the chargers, after the lifecycle decided. */
export class PowerListener implements ChargerEventListener {
  constructor(private readonly manager: LoadManager) {}

  transactionStarted(_event: TransactionStarted, verdict: TokenVerdict): void {
    // After the reply is on its way: a TxProfile names the transaction the reply gives it.
    if (verdict.accepted) setImmediate(() => void this.manager.reallocate('session_start'));
  }

  meterSample(sample: MeterSample): void {
    this.manager.sampled(sample);
  }

  transactionEnded(_event: TransactionEnded, drawing: Session | undefined): void {
    if (drawing) this.manager.forgetReading(drawing.chargerId, drawing.connectorId);
    void this.manager.reallocate('session_end');
  }

  chargerOnline(chargerId: string): void {
    this.manager.chargerUp(chargerId, 'reconnect');
  }

  chargerBooted(chargerId: string): void {
    this.manager.chargerUp(chargerId, 'boot');
  }
}
