import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/read-config.js';
import { createLogger } from '../src/shared/log.js';
import { openDatabase } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { OutboxMonitor } from '../src/uplink/outbox-monitor.js';
import { OutboxQueue } from '../src/uplink/outbox-queue.js';
import { uplinkSettings } from '../src/uplink/settings.js';
import { Topics } from '../src/uplink/topics.js';
import { startTestGateway, testConfig } from './helpers/gateway.js';
import { Writable } from 'node:stream';
import { gatewayHealth } from './helpers/operator.js';

const parse = (uplink: unknown) => parseConfig({ ...testConfig('/tmp/x'), uplink }, '/etc/fgw');

describe('uplink config', () => {
  it('is off without a URL; defaults derive from the site', () => {
    expect(uplinkSettings(parse(undefined))).toBeNull();
    const s = uplinkSettings(parse({ url: 'mqtts://broker.example:8883', tls: { ca: 'ca.pem' } }));
    expect(s).toMatchObject({
      clientId: 'fleetgw-test-site',
      topicPrefix: 'fleetgw/test-site/',
      tls: { ca: '/etc/fgw/ca.pem' },
      reconnectMs: 5000,
    });
    for (const url of ['mqtt://h:1883', 'mqtts://h', 'ws://h:8080/mqtt', 'wss://h/mqtt'])
      expect(uplinkSettings(parse({ url }))?.url).toBe(url);
  });

  it('names the key of a bad value', () => {
    const bad: [unknown, string][] = [
      [{ url: 'http://h' }, 'uplink.url'],
      [{ url: 'mqtt://user:secret@h' }, 'uplink.url'],
      [{ url: 'mqtt://h', topicPrefix: 'no/slash' }, 'uplink.topicPrefix'],
      [{ url: 'mqtt://h', topicPrefix: 'a/+/' }, 'uplink.topicPrefix'],
      [{ url: 'mqtt://h', password: 'p' }, 'uplink.password'],
      [{ url: 'mqtt://h', tls: { cert: 'c.pem' } }, 'uplink.tls'],
      [{ url: 'mqtt://h', outbox: { warnDepth: 0 } }, 'uplink.outbox.warnDepth'],
      [{ url: 'mqtt://h', surprise: 1 }, 'uplink'],
    ];
    for (const [uplink, key] of bad) {
      expect(() => parse(uplink)).toThrow(ConfigError);
      expect(() => parse(uplink)).toThrow(`config key ${key}`);
    }
  });

  it('topic levels escape what MQTT gives a meaning', () => {
    const t = new Topics('p/');
    expect(t.status('CP-1', '*')).toBe('p/status/CP-1');
    expect(t.status('CP-1', 'A/1+#%')).toBe('p/status/CP-1/A%2f1%2b%23%25');
  });
});

describe('outbox bound', () => {
  it('prunes sent rows after the retention, never unsent ones, and warns above the threshold', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-outbox-'));
    const db = openDatabase(join(dir, 'g.db'));
    try {
      const outbox = new Outbox(db);
      const queue = new OutboxQueue(db);
      for (let i = 0; i < 5; i++) outbox.enqueue('ledger', { n: i }, '2026-01-01T00:00:00.000Z');
      queue.markSent([1, 2], '2026-01-01T00:00:00.000Z');
      queue.markSent([3], '2026-01-03T00:00:00.000Z');
      const lines: string[] = [];
      const log = createLogger(
        'info',
        new Writable({ write: (c: Buffer, _e, d) => (lines.push(c.toString()), d()) }),
      );
      const monitor = new OutboxMonitor({
        queue,
        clock: { now: () => Date.parse('2026-01-03T12:00:00.000Z') },
        log,
        sentRetentionMs: 24 * 3_600_000,
        warnDepth: 1,
        intervalMs: 60_000,
      });
      monitor.check();
      expect(db.prepare('SELECT seq FROM outbox ORDER BY seq').all()).toEqual([
        { seq: 3 },
        { seq: 4 },
        { seq: 5 },
      ]);
      expect(lines.join('')).toContain('outbox backlog above uplink.outbox.warnDepth');
      // the schema refuses to lose an unsent row or to rewrite a sent one
      expect(() => db.prepare('DELETE FROM outbox WHERE seq = 4').run()).toThrow(/never deleted/);
      expect(() => db.prepare("UPDATE outbox SET payload = '{}' WHERE seq = 3").run()).toThrow(
        /marked sent once/,
      );
      expect(() => db.prepare("UPDATE outbox SET sent_at = 'x' WHERE seq = 3").run()).toThrow(
        /marked sent once/,
      );
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without a broker the gateway runs alone, says the uplink is off and keeps queueing', async () => {
    const t = await startTestGateway();
    try {
      expect(t.logLines.some((l) => l.includes('uplink off: no broker configured'))).toBe(true);
      const health = await gatewayHealth<{
        outboxDepth: number;
        uplink: { enabled: boolean; outboxDepth: number };
      }>(t.gw.operatorUrl, t.gw.db);
      expect(health.uplink.enabled).toBe(false);
      expect(health.uplink.outboxDepth).toBe(health.outboxDepth);
      expect(health.outboxDepth).toBeGreaterThan(0); // the seed's opening balances wait for an uplink
    } finally {
      await t.close();
    }
  });
});

describe('command JSON Schema agrees with the zod validation at the edge', () => {
  it('accepts what the gateway applies and refuses what it rejects as invalid', async () => {
    const { validators } = await import('./helpers/cloud.js');
    const { parseCommand } = await import('../src/uplink/commands.js');
    const samples: unknown[] = [
      { id: 'a', type: 'top_up', driverId: 'd', amount: 1 },
      { id: 'a', type: 'top_up', driverId: 'd', amount: 0 },
      { id: 'a', type: 'adjustment', driverId: 'd', amount: -5, reason: 'r' },
      { id: 'a', type: 'adjustment', driverId: 'd', amount: 0, reason: 'r' },
      {
        id: 'a',
        type: 'driver_upsert',
        driverId: 'd',
        fleetId: 'f',
        email: 'a@b.c',
        vehicle: null,
      },
      { id: 'a', type: 'vehicle_assign', driverId: 'd', vehicle: { model: 'm', batteryKwh: 0 } },
      { id: 'a', type: 'api_key_rotate', fleetId: 'f' },
      { id: 'a', type: 'api_key_rotate', fleetId: 'f', revokeKeyHashes: ['a'.repeat(64)] },
      {
        id: 'a',
        type: 'telematics_soc',
        driverId: 'd',
        socPercent: 50,
        measuredAt: '2026-01-01T00:00:00Z',
      },
      { id: 'a', type: 'telematics_soc', driverId: 'd', socPercent: 50, measuredAt: 'yesterday' },
      { id: 'a', type: 'driver_deactivate', driverId: 'd', extra: true },
      ...[
        '04A23B1C',
        ' 04:a2:3b:1c\u0000',
        '   ',
        '',
        'A'.repeat(36),
        `  ${'A'.repeat(36)}  `,
        'A'.repeat(37),
        'AB\u0001CD',
        'driver ada',
      ].map((value) => ({
        id: 'a',
        type: 'token_bind',
        driverId: 'd',
        kind: 'card',
        tokenType: 'ISO14443',
        value,
      })),
      { id: 'a', type: 'token_bind', driverId: 'd', kind: 'card', tokenType: 'Mifare', value: 'A' },
      {
        id: 'a',
        type: 'token_bind',
        driverId: 'd',
        kind: 'vehicle',
        tokenType: 'MacAddress',
        value: 'VID:0023A7F1C2D4',
        expiresAt: null,
      },
      {
        id: 'a',
        type: 'token_bind',
        driverId: 'd',
        kind: 'card',
        tokenType: 'Local',
        value: 'A',
        expiresAt: 'soon',
      },
      { id: 'a', type: 'token_unbind', value: '04A23B1C' },
      { id: 'a', type: 'token_block', value: '04A23B1C', driverId: 'd', reason: 'lost' },
      { id: 'a', type: 'token_block', value: '04A23B1C', reason: '' },
      { id: 'a', type: 'token_unblock', value: '04A23B1C', label: 'x' },
    ];
    for (const sample of samples) {
      const zodOk = parseCommand(Buffer.from(JSON.stringify(sample))).ok;
      expect([JSON.stringify(sample), validators.command(sample)]).toEqual([
        JSON.stringify(sample),
        zodOk,
      ]);
    }
  });
});
