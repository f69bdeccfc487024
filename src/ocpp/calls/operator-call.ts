import ocppRpc from 'ocpp-rpc';
import { ChargerTimeoutError, type ChargerReply, type CommandOutcome } from '../port.js';
import type { RpcConnection } from '../connection/rpc.js';

const { RPCError } = ocppRpc;

/** What an outgoing operator call needs of its connection. */
export interface CallTarget {
  ctx: { rpc: RpcConnection; callTimeoutMs: number };
}

/**
 * Sends an operator's call and returns the charger's own answer: its reply, or its CALLERROR as
 * status `CallError` with the charger's code and message. No answer in time, or a link that
 * drops while waiting, is ChargerTimeoutError: the call is never retried or queued.
 */
export async function callForReply(
  target: CallTarget,
  method: string,
  params: unknown,
): Promise<ChargerReply> {
  const { rpc, callTimeoutMs } = target.ctx;
  try {
    const raw = await rpc.call(method, params, { callTimeoutMs });
    const status = (raw as { status?: unknown } | null)?.status;
    return { status: typeof status === 'string' ? status : 'Accepted', raw };
  } catch (err) {
    if (err instanceof RPCError) {
      const rpcError = err as InstanceType<typeof RPCError> & {
        rpcErrorCode: string;
        rpcErrorMessage: string;
      };
      return {
        status: 'CallError',
        raw: { errorCode: rpcError.rpcErrorCode, errorDescription: rpcError.message },
      };
    }
    throw new ChargerTimeoutError(`${method} unanswered: ${(err as Error).message}`);
  }
}

/** A reply as the charging layer's outcome: only Accepted is accepted. */
export const outcomeOf = (reply: ChargerReply): CommandOutcome =>
  reply.status === 'Accepted' ? 'accepted' : 'rejected';
