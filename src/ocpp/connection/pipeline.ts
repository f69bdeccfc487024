import type { ChargerReports } from '../charger-state/reports.js';
import { edgeConnection, type EdgeReports, type FrameNormalizer } from './edge.js';
import { observedConnection, type OcppObserver } from './observed-connection.js';
import { guardedConnection, servingConnection, type RpcClient, type RpcConnection } from './rpc.js';

/**
 * One charger's connection as its adapter sees it, each layer wrapping the one before: ocpp-rpc's
 * client serving one dispatch (rpc.ts), every call timed (observed-connection.ts), each frame read
 * tolerantly and checked against its schema (edge.ts), and what a handler throws answered safely
 * (rpc.ts's guard). `internalError`: a bug of ours, logged; the charger hears only InternalError.
 */
export function connectionPipeline(
  client: RpcClient,
  protocol: string,
  normalizer: FrameNormalizer,
  observer: OcppObserver | undefined,
  reports: Pick<ChargerReports, 'deviation' | 'noted'>,
  internalError: (method: string, err: unknown) => void,
): RpcConnection {
  return guardedConnection(
    edgeConnection(
      observedConnection(servingConnection(client), protocol, observer),
      protocol,
      normalizer,
      new ReportsToCharger(reports, internalError),
    ),
    internalError,
  );
}

/** What the edge reports, told to the charger's reports: one object, its methods the prototype's. */
class ReportsToCharger implements EdgeReports {
  constructor(
    private readonly reports: Pick<ChargerReports, 'deviation' | 'noted'>,
    readonly ourMistake: (method: string, err: unknown) => void,
  ) {}

  deviation(kind: string, example: unknown): void {
    this.reports.deviation(kind, example);
  }

  notUnderstood(method: string, problem: string, payload: unknown): void {
    this.reports.noted(method, `not understood: ${problem}`, payload);
  }
}
