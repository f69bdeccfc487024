import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ADDON_NODE_API, nodeRefusal, refusalMessage } from '../src/shared/supported-node.js';
import { shellCommand } from '../src/shared/shell-command.js';
import { testConfig, testSeed } from './helpers/gateway.js';
import { systemEnv, systemNodeVersion } from './helpers/system-node.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli.js');

/** package.json's engines, `^22.14 || ^24 || ^26`, read as npm reads carets on a major. */
function enginesAllow(version: string): boolean {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
  };
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return engines.node.split('||').some((range) => {
    const m = /^\s*\^(\d+)(?:\.(\d+))?\s*$/.exec(range);
    if (!m) throw new Error(`engines range ${range} is not a caret on a major`);
    return major === Number(m[1]) && minor >= Number(m[2] ?? 0);
  });
}

describe('which Node the gateway runs on', () => {
  it('refuses exactly the Nodes package.json engines leaves out', () => {
    // Every major and minor from 14.0 to 30.30: few enough to try them all.
    for (let major = 14; major <= 30; major++)
      for (let minor = 0; minor <= 30; minor++) {
        const node = `${major}.${minor}.3`;
        const refusal = nodeRefusal({ node, napi: String(ADDON_NODE_API) });
        expect(refusal === undefined, node).toBe(enginesAllow(node));
        if (refusal) expect(refusal).toContain(`Node ${node} is not supported`);
      }
  });

  it("refuses a Node without the addon's Node-API version, and knows which version that is", () => {
    const gyp = readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'binding.gyp'), 'utf8');
    expect(Number(/NAPI_VERSION=(\d+)/.exec(gyp)?.[1])).toBe(ADDON_NODE_API);
    expect(nodeRefusal({ node: '24.21.0', napi: String(ADDON_NODE_API - 1) })).toMatch(
      /needs Node-API 10/,
    );
    expect(nodeRefusal({ node: '24.21.0' })).toMatch(/has Node-API none/);
    expect(nodeRefusal(process.versions)).toBeUndefined();
  });

  it('pins one Node for linux-x64 and linux-arm64, each optional so npm skips the one that does not fit', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<
        string,
        { version?: string; cpu?: string; optional?: boolean; dev?: boolean }
      >;
    };
    const pins = ['x64', 'arm64'].map((cpu) => ({
      cpu,
      entry: lock.packages[`node_modules/node-linux-${cpu}`],
    }));
    for (const { cpu, entry } of pins) {
      // A pin that is not optional stops `npm ci` on every other cpu with EBADPLATFORM.
      expect(entry, cpu).toMatchObject({ cpu, optional: true });
      expect(entry?.dev, cpu).toBeUndefined();
    }
    expect(pins[0]?.entry?.version).toBe(pins[1]?.entry?.version);
    expect(
      nodeRefusal({ node: pins[0]?.entry?.version ?? '', napi: String(ADDON_NODE_API) }),
    ).toBeUndefined();
  });

  it('names a command that the shell reads back as the same words', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 4 }), (args) => {
        const message = refusalMessage(
          'Node 20.0.0 is not supported',
          ['node', '/p/dist/cli.js', ...args],
          '/p',
          '/p/node_modules/.bin/node',
        );
        const command = message.split('\n')[1]?.trim() ?? '';
        expect(command).toBe(shellCommand(['node_modules/.bin/node', 'dist/cli.js', ...args]));
        const words = spawnSync('bash', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' });
        expect(words.stdout.split('\0').slice(0, -1)).toEqual([
          'node_modules/.bin/node',
          'dist/cli.js',
          ...args,
        ]);
      }),
      { numRuns: 30 },
    );
    expect(refusalMessage('r', ['node', '/p/dist/cli.js'], '/elsewhere', undefined)).toBe(
      'fleet-gateway: r; install Node 22 (22.14 or later), 24 or 26 and run it again',
    );
  });
});

describe("`node dist/cli.js` on the machine's own Node", () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-node-'));
  const configPath = join(dir, 'gateway.yaml');
  beforeAll(async () => {
    writeFileSync(configPath, stringify(testConfig(dir)));
    writeFileSync(join(dir, 'seed.json'), JSON.stringify(testSeed));
    await run(process.execPath, [CLI, 'seed', '--config', configPath, join(dir, 'seed.json')]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs, or says in words that this Node is unsupported and what to run instead, which works', () => {
    const version = systemNodeVersion();
    expect(version, 'a node on the system PATH').toBeDefined();
    const args = ['dist/cli.js', 'ledger', 'verify', '--config', configPath];
    const first = spawnSync('node', args, { cwd: ROOT, env: systemEnv(), encoding: 'utf8' });
    // A crash in the addon ends in a signal (SIGSEGV on Node 20), never in an exit code.
    expect(first.signal, first.stderr).toBeNull();
    if (nodeRefusal({ node: (version ?? '').slice(1), napi: '10' }) === undefined) {
      expect(first.status, first.stderr).toBe(0);
      return;
    }
    expect(first.status).toBe(1);
    expect(first.stdout).toBe('');
    expect(first.stderr).toContain(
      `fleet-gateway: Node ${(version ?? '').slice(1)} is not supported`,
    );
    const instead = first.stderr.split('\n')[1]?.trim() ?? '';
    expect(instead).toBe(shellCommand(['node_modules/.bin/node', ...args]));
    const second = spawnSync('bash', ['-c', instead], {
      cwd: ROOT,
      env: systemEnv(),
      encoding: 'utf8',
    });
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/ledger/i);
  });
});
