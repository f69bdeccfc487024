import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import mqtt, { type MqttClient } from 'mqtt';
import { waitUntil } from './wait.js';

const SCHEMA_DIR = join(import.meta.dirname, '..', '..', 'schemas', 'mqtt');

function loadValidator(name: string, ajv: Ajv2020): ValidateFunction {
  return ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, name), 'utf8')) as object);
}

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats.default(ajv);
export const validators = {
  ledger: loadValidator('ledger.json', ajv),
  sessions: loadValidator('session.json', ajv),
  replies: loadValidator('reply.json', ajv),
  status: loadValidator('status.json', ajv),
  gateway: loadValidator('gateway.json', ajv),
  command: loadValidator('command.json', ajv),
  bridge: loadValidator('bridge.json', ajv),
  alerts: loadValidator('alert.json', ajv),
};

export interface Received {
  topic: string;
  /** The topic without the prefix: ledger, sessions, replies, gateway, status/… */
  kind: string;
  body: Record<string, unknown>;
  retain: boolean;
}

/**
 * The fleet's cloud in tests: a persistent-session subscriber to everything under the prefix that
 * checks every payload against its JSON Schema in schemas/mqtt, and publishes commands.
 */
export class Cloud {
  readonly received: Received[] = [];
  readonly schemaErrors: string[] = [];
  private readonly watchers: ((m: Received) => void)[] = [];

  private constructor(
    readonly client: MqttClient,
    readonly prefix: string,
  ) {
    client.on('message', (topic, payload, packet) => {
      const kind = topic.slice(prefix.length);
      if (kind === 'commands') return;
      const body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      const key = kind.startsWith('status/') ? 'status' : kind;
      const validate = validators[key as keyof typeof validators] as ValidateFunction | undefined;
      if (!validate) this.schemaErrors.push(`${topic}: no schema`);
      else if (!validate(body))
        this.schemaErrors.push(`${topic}: ${ajv.errorsText(validate.errors)} in ${payload}`);
      const m = { topic, kind, body, retain: packet.retain };
      this.received.push(m);
      for (const w of this.watchers) w(m);
    });
  }

  static async connect(
    url: string,
    prefix: string,
    clientId = 'fleet-cloud-test',
    login: { username: string; password: string } | Record<string, never> = {},
  ): Promise<Cloud> {
    const client = mqtt.connect(url, {
      clientId,
      clean: false,
      protocolVersion: 4,
      reconnectPeriod: 100,
      ...login,
    });
    const cloud = new Cloud(client, prefix);
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    await client.subscribeAsync(`${prefix}#`, { qos: 1 });
    return cloud;
  }

  /**
   * Calls `act` inside the message handler that receives the `count`th message of `kind`, so a
   * test can act at that moment (polling would let a fast publisher run far past it).
   */
  onReceived(kind: string, count: number, act: () => void): void {
    let seen = this.of(kind).length;
    if (seen >= count) return act();
    const watcher = (m: Received) => {
      if (m.kind !== kind || ++seen !== count) return;
      this.watchers.splice(this.watchers.indexOf(watcher), 1);
      act();
    };
    this.watchers.push(watcher);
  }

  of(kind: string): Record<string, unknown>[] {
    return this.received.filter((m) => m.kind === kind).map((m) => m.body);
  }

  /** Distinct payloads of a kind by their stable id, in first-seen order. */
  distinct(kind: string): Record<string, unknown>[] {
    const seen = new Map<unknown, Record<string, unknown>>();
    for (const body of this.of(kind)) if (!seen.has(body.id)) seen.set(body.id, body);
    return [...seen.values()];
  }

  async command(command: Record<string, unknown> | string): Promise<void> {
    const payload = typeof command === 'string' ? command : JSON.stringify(command);
    await this.client.publishAsync(`${this.prefix}commands`, payload, { qos: 1 });
  }

  async reply(
    commandId: string,
    status?: string,
    timeoutMs = 10_000,
  ): Promise<Record<string, unknown>> {
    return waitUntil(
      () =>
        this.of('replies')
          .filter((r) => r.commandId === commandId && (status === undefined || r.status === status))
          .at(-1),
      timeoutMs,
      `reply to ${commandId}`,
    );
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
