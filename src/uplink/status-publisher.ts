import type { MqttClient } from 'mqtt';
import type { ConnectorView } from '../ocpp/port.js';
import type { Topics } from './topics.js';

/**
 * Charger and connector status, published retained with QoS 1: the broker keeps the latest for
 * every topic. Nothing is queued durably: only the newest status per topic waits for a
 * connection, and a newer change replaces an older one that was not sent yet.
 */
export class StatusPublisher {
  private readonly latest = new Map<string, string>();
  private readonly pending = new Set<string>();

  constructor(
    private readonly client: MqttClient,
    private readonly topics: Topics,
  ) {}

  changed(view: ConnectorView, at: string): void {
    const topic = this.topics.status(view.chargerId, view.connectorId);
    const payload = {
      type: 'connector_status',
      chargerId: view.chargerId,
      connectorId: view.connectorId,
      status: view.status,
      errorCode: view.errorCode,
      socPercent: view.socPercent,
      socAt: view.socAt,
      batteryWh: view.batteryWh,
      at,
    };
    this.latest.set(topic, JSON.stringify(payload));
    this.pending.add(topic);
    this.flush();
  }

  /** Sends what is waiting; called on every change and on (re)connect. */
  flush(): void {
    if (!this.client.connected) return;
    for (const topic of [...this.pending]) {
      this.pending.delete(topic);
      const payload = this.latest.get(topic) as string;
      this.client.publish(topic, payload, { qos: 1, retain: true }, (err) => {
        if (err && this.latest.get(topic) === payload) this.pending.add(topic);
      });
    }
  }
}
