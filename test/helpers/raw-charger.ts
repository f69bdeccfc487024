import ocppRpc from 'ocpp-rpc';
import type { RPCClient as RpcClientType } from 'ocpp-rpc';

const { RPCClient } = ocppRpc;

export type RawClient = InstanceType<typeof RPCClient>;

/** A bare OCPP client for sending frames a well-behaved simulator never would. */
export async function rawCharger(
  ocppUrl: string,
  identity: string,
  password: string | undefined,
  protocols: string[] = ['ocpp1.6'],
  /** ws options, e.g. TLS: `{ ca, cert, key }` (PEM contents). */
  wsOpts: Record<string, unknown> = {},
): Promise<RawClient> {
  const options = {
    endpoint: ocppUrl,
    identity,
    password: password ?? null,
    protocols,
    strictMode: false,
    reconnect: false,
    callTimeoutMs: 5000,
    wsOpts,
  } as unknown as ConstructorParameters<typeof RPCClient>[0];
  const client = new RPCClient(options);
  client.handle(async () => ({ status: 'Accepted' }));
  await client.connect();
  return client;
}

export type { RpcClientType };

/** A 1.6 GetConfiguration answer from a charger's stored keys (all of them when none is named). */
export function configurationAnswer(held: ReadonlyMap<string, string>, params: unknown) {
  const keys = (params as { key?: string[] }).key ?? [...held.keys()];
  return {
    configurationKey: keys
      .filter((k) => held.has(k))
      .map((key) => ({ key, readonly: false, value: held.get(key) })),
    unknownKey: keys.filter((k) => !held.has(k)),
  };
}
