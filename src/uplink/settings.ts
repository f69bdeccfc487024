import type { GatewayConfig } from '../config/schema.js';

export interface UplinkSettings {
  url: string;
  clientId: string;
  username: string | undefined;
  password: string | undefined;
  tls: { ca?: string; cert?: string; key?: string } | undefined;
  topicPrefix: string;
  keepaliveSeconds: number;
  reconnectMs: number;
}

/** The uplink's settings with the site-derived defaults, or null when no broker is configured. */
export function uplinkSettings(config: GatewayConfig): UplinkSettings | null {
  const u = config.uplink;
  if (!u.url) return null;
  return {
    url: u.url,
    clientId: u.clientId ?? `fleetgw-${config.siteId}`,
    username: u.username,
    password: u.password,
    tls: u.tls,
    topicPrefix: topicPrefix(config),
    keepaliveSeconds: u.keepaliveSeconds,
    reconnectMs: Math.round(u.reconnectSeconds * 1000),
  };
}

export function topicPrefix(config: GatewayConfig): string {
  return config.uplink.topicPrefix ?? `fleetgw/${config.siteId}/`;
}
