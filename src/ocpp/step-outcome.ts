import ocppRpc from 'ocpp-rpc';
import { ChargerTimeoutError, type StepOutcome } from './port.js';
import type { RpcConnection } from './rpc.js';

const { RPCError } = ocppRpc;

/**
 * Sends a call the charger may not implement (the stop ladder, recovery probes): a reply whose
 * status is in `accepted` is 'accepted', any other status 'rejected', a CALLERROR (NotSupported,
 * NotImplemented, a firmware that never heard of it) 'not_supported'. No answer in time is
 * ChargerTimeoutError, as for every call.
 */
export async function stepOutcome(
  rpc: RpcConnection,
  method: string,
  params: unknown,
  callTimeoutMs: number,
  accepted: readonly string[] = ['Accepted'],
): Promise<StepOutcome> {
  let reply: unknown;
  try {
    reply = await rpc.call(method, params, { callTimeoutMs });
  } catch (err) {
    if (err instanceof RPCError) return 'not_supported';
    throw new ChargerTimeoutError(`${method} unanswered: ${(err as Error).message}`);
  }
  const status = (reply as { status?: unknown } | null)?.status;
  if (status === 'NotSupported' || status === 'NotImplemented') return 'not_supported';
  return typeof status === 'string' && accepted.includes(status) ? 'accepted' : 'rejected';
}
