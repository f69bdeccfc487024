import ocppRpc from 'ocpp-rpc';
import { ChargerTimeoutError, type CommandOutcome } from './port.js';

const { RPCError } = ocppRpc;

export interface HandlerArgs {
  params: unknown;
}

/** The slice of an ocpp-rpc connection the adapters use; keeps the library's loose types at the edge. */
export interface RpcConnection {
  handle(method: string, handler: (args: HandlerArgs) => unknown): void;
  call(method: string, params: unknown, options?: { callTimeoutMs?: number }): Promise<unknown>;
}

/** What every protocol adapter offers the central system for one connected charger. */
export interface ProtocolSession {
  requestStart(connectorId: string, idToken: string): Promise<CommandOutcome>;
  requestStop(transactionRef: string): Promise<CommandOutcome>;
}

/**
 * Sends a call. A CALLERROR from the charger is an answer (null: treat as refused); no answer
 * in time, or a link that drops while waiting, is ChargerTimeoutError.
 */
export async function callOutcome(
  rpc: RpcConnection,
  method: string,
  params: unknown,
  callTimeoutMs: number,
): Promise<unknown> {
  try {
    return await rpc.call(method, params, { callTimeoutMs });
  } catch (err) {
    if (err instanceof RPCError) return null;
    throw new ChargerTimeoutError(`${method} unanswered: ${(err as Error).message}`);
  }
}
