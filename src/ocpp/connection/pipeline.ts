import type { ChargerReports } from '../charger-state/reports.js';
import { edgeConnection, type FrameNormalizer } from './edge.js';
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
      {
        deviation: (kind, example) => reports.deviation(kind, example),
        notUnderstood: (method, problem, payload) =>
          reports.noted(method, `not understood: ${problem}`, payload),
        ourMistake: internalError,
      },
    ),
    internalError,
  );
}
