import ocppRpc from 'ocpp-rpc';

/**
 * A bare ocpp-rpc server with the gateway's RPCServer options (both subprotocols, strictMode, its
 * call timeout, ping interval and frame limit), for the bare references.
 */
export function bareRpcServer(): InstanceType<typeof ocppRpc.RPCServer> {
  return new ocppRpc.RPCServer({
    protocols: ['ocpp1.6', 'ocpp2.0.1'],
    strictMode: true,
    callTimeoutMs: 15_000,
    pingIntervalMs: 30_000,
    respondWithDetailedErrors: false,
    wssOptions: { maxPayload: 65_536 },
  });
}
