import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import type { UplinkSettings } from './settings.js';

/**
 * Client options for the persistent session: a fixed client id with clean session off, so the
 * broker keeps the gateway's subscription and queues commands while it is away; MQTT 3.1.1 (every
 * broker speaks it); a retained last will that tells the cloud the gateway went away.
 */
export function mqttOptions(
  s: UplinkSettings,
  will: { topic: string; payload: string },
): IClientOptions {
  const options: IClientOptions = {
    clientId: s.clientId,
    clean: false,
    protocolVersion: 4,
    keepalive: s.keepaliveSeconds,
    reconnectPeriod: s.reconnectMs,
    connectTimeout: 30_000,
    resubscribe: false,
    will: { topic: will.topic, payload: Buffer.from(will.payload), qos: 1, retain: true },
  };
  if (s.username !== undefined) options.username = s.username;
  if (s.password !== undefined) options.password = s.password;
  if (s.tls?.ca) options.ca = pem(s.tls.ca, 'ca');
  if (s.tls?.cert) options.cert = pem(s.tls.cert, 'cert');
  if (s.tls?.key) options.key = pem(s.tls.key, 'key');
  return options;
}

function pem(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`config key uplink.tls.${key}: cannot read ${path}: ${(err as Error).message}`);
  }
}
