/** The uplink's MQTT topics, all under one prefix (default `fleetgw/<siteId>/`). */
export class Topics {
  constructor(readonly prefix: string) {}

  /** Up, from the outbox: `ledger`, `sessions`, `replies` (QoS 1, in outbox order). */
  outbox(topic: string): string {
    return `${this.prefix}${topic}`;
  }

  /** Down: commands from the fleet's cloud (QoS 1, persistent session). */
  get commands(): string {
    return `${this.prefix}commands`;
  }

  /** Up, retained: whether the gateway is connected (its last will says when it is not). */
  get gateway(): string {
    return `${this.prefix}gateway`;
  }

  /** Up, retained: a connector's status, or the whole charger's when connectorId is `*`. */
  status(chargerId: string, connectorId: string): string {
    const charger = `${this.prefix}status/${level(chargerId)}`;
    return connectorId === '*' ? charger : `${charger}/${level(connectorId)}`;
  }
}

/** One topic level: the characters MQTT gives a meaning (/ + #) are percent-encoded. */
function level(value: string): string {
  return value
    .replace(/[%/+#]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .split('\u0000')
    .join('%00');
}
