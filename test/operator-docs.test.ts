import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';

/**
 * Runs the curl blocks of docs/operator-api.md (those marked checked-by this file: curl -s -H,
 * -o for the export, -d for the money) as printed, against a running gateway: only the example
 * address is replaced by the test gateway's, and uuidgen is provided when the machine lacks it, and a line break follows each answer.
 */
const run = promisify(execFile);
const DOC = join(import.meta.dirname, '..', 'docs', 'operator-api.md');
const EXAMPLE_URL = 'http://10.20.0.5:8081';

function checkedBlocks(): string[] {
  const text = readFileSync(DOC, 'utf8');
  const re = /<!-- checked-by: test\/operator-docs\.test\.ts -->\s*```sh\n([\s\S]*?)```/g;
  return [...text.matchAll(re)].map((m) => m[1] ?? '');
}

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
  writeFileSync(join(t.dir, 'amaka.credential'), createOperator(t.gw.db, 'amaka', 'operator'));
});
afterAll(async () => t.close());

describe('docs/operator-api.md curl examples', () => {
  it('work as printed', async () => {
    const blocks = checkedBlocks();
    expect(blocks).toHaveLength(3);
    const script = [
      'set -eu',
      'command -v uuidgen >/dev/null || uuidgen() { cat /proc/sys/kernel/random/uuid; }',
      // One answer per line, to read them apart.
      'curl() { command curl "$@"; echo; }',
      ...blocks.map((b) => b.replaceAll(EXAMPLE_URL, t.gw.operatorUrl)),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], { cwd: t.dir });
    const answers = stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(answers.filter((a) => 'error' in a)).toEqual([]);
    expect(answers).toHaveLength(5); // audit, two session lists, top-up, adjustment
    expect(answers[3]).toMatchObject({ driverId: DRIVERS.ada.id, kind: 'top_up', amount: 5000 });
    expect(answers[4]).toMatchObject({ kind: 'adjustment', amount: -1200 });
    expect(readFileSync(join(t.dir, 'november.csv'), 'utf8')).toMatch(/^seq,id,fleetId,/);
  });
});
