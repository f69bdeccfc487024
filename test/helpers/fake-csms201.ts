import ocppRpc from 'ocpp-rpc';
import type { IncomingCalls, OutgoingCalls } from '../../simulators/ocpp201/ocpp-messages.js';
import type {
  AuthorizationStatus,
  TransactionEventRequest,
  TransactionEventResponse,
} from '../../simulators/ocpp201/ocpp-types.js';
import { RecordingCentralSystem, type Answer, type CallTable } from './recording-central-system.js';

// At runtime ocpp-rpc exports NOREPLY as a bare symbol (its .d.ts says otherwise).
const NOREPLY = ocppRpc.NOREPLY as unknown as symbol;

/**
 * A bare CSMS of the 2.0.1 family (2.0.1, or 2.1 with `In` widened to its calls) that answers
 * everything a station sends and records it.
 */
export class FakeCsms<
  In extends CallTable<In> & IncomingCalls = IncomingCalls,
> extends RecordingCentralSystem<OutgoingCalls, In> {
  idTokenStatus: AuthorizationStatus = 'Accepted';
  authorizeStatus: AuthorizationStatus = 'Accepted';
  /** How many TransactionEvents to leave unanswered (recorded all the same). */
  unansweredTransactionEvents = 0;

  protected answers(answer: Answer<OutgoingCalls>): void {
    answer('BootNotification', () => this.bootConf());
    answer('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    answer('StatusNotification', () => ({}));
    answer('MeterValues', () => ({}));
    answer('NotifyEvent', () => ({}));
    answer('NotifyReport', () => ({}));
    answer('NotifyEVChargingNeeds', () => ({ status: 'Accepted' }));
    answer('Authorize', () => ({ idTokenInfo: { status: this.authorizeStatus } }));
    answer('TransactionEvent', (params) => {
      if (this.unansweredTransactionEvents > 0) {
        this.unansweredTransactionEvents--;
        return NOREPLY;
      }
      return {
        ...(params.idToken ? { idTokenInfo: { status: this.idTokenStatus } } : {}),
        ...this.transactionEventExtras(params),
      };
    });
  }

  /** What a subclass adds to a TransactionEvent's answer (2.1: a transaction limit). */
  protected transactionEventExtras(_event: TransactionEventRequest): TransactionEventResponse {
    return {};
  }

  transactionEvents(transactionId?: string): TransactionEventRequest[] {
    return this.messages('TransactionEvent').filter(
      (event) =>
        transactionId === undefined || event.transactionInfo.transactionId === transactionId,
    );
  }

  async setVariables(
    identity: string,
    values: [component: string, variable: string, value: string][],
  ): Promise<string[]> {
    const conf = await this.call(identity, 'SetVariables', {
      setVariableData: values.map(([component, variable, attributeValue]) => ({
        component: { name: component },
        variable: { name: variable },
        attributeValue,
      })),
    });
    return conf.setVariableResult.map((result) => result.attributeStatus);
  }
}
