import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommanderError, type Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cloud } from './helpers/cloud.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { waitUntil } from './helpers/wait.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { buildProgram as buildGatewayProgram } from '../src/cli/program.js';
import { buildProgram as buildSimulatorProgram } from '../simulators/shared/cli-program.js';
import {
  SHELL_LANGS,
  codeSpans,
  flagsOf,
  headingAnchors,
  linkTargets,
  readDocs,
  shellCommands,
  splitFences,
  splitLine,
  trackerReferences,
  type FencedBlock,
  type SimpleCommand,
} from './helpers/docs-scan.js';

/**
 * Docs that cannot drift from the code (docs/development.md, "Docs that cannot drift"):
 * - every fenced shell block is checked here or names, in `<!-- checked-by: FILE -->` right
 *   before it, the file that runs it, and that file holds each of its commands and options;
 * - every `fleet-gateway …` / `node dist/cli.js …` line is parsed by the real CLI, and the cheap,
 *   safe ones run for real against a temp database;
 * - every relative link resolves to a file (and heading) inside the repository.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const docs = readDocs(ROOT);
const scanned = docs.map((doc) => ({ doc, ...splitFences(doc) }));
const shellBlocks = scanned.flatMap((s) => s.blocks).filter((b) => SHELL_LANGS.has(b.lang));
const spans = scanned.flatMap((s) => codeSpans(s.prose));
/** The one block this file runs itself (below): docs/mqtt.md's worked example. */
const mqttExample = shellBlocks.find(
  (b) => b.doc === 'docs/mqtt.md' && b.body.includes('mosquitto_pub'),
);

/** Every source file the docs may name an environment variable or a command of. */
function sourceCorpus(): string {
  const files: string[] = ['package.json', '.ci/run', 'Dockerfile'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (/\.(ts|js|sh)$/.test(name) && path !== 'test/docs.test.ts') files.push(path);
    }
  };
  for (const dir of ['src', 'test', 'simulators']) walk(dir);
  return files
    .filter((f) => existsSync(join(ROOT, f)))
    .map((f) => readFileSync(join(ROOT, f), 'utf8'))
    .join('\n');
}
const corpus = sourceCorpus();
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** Which kind of command a doc shows, by its program. */
type Kind = 'gateway' | 'simulator' | 'npm' | 'vitest' | 'builtin' | 'other';

function kindOf(words: string[]): { kind: Kind; args: string[] } {
  const [program = '', first = ''] = words;
  if (program === 'fleet-gateway') return { kind: 'gateway', args: words.slice(1) };
  if (program === 'node' && first === 'dist/cli.js')
    return { kind: 'gateway', args: words.slice(2) };
  if (program === 'node' && /^dist\/simulators\/ocpp(16|201)\/cli\.js$/.test(first)) {
    return { kind: 'simulator', args: words.slice(2) };
  }
  if (program === 'npm') return { kind: 'npm', args: words.slice(1) };
  if (program === 'npx' && first === 'vitest') return { kind: 'vitest', args: words.slice(2) };
  if (['echo', 'cd', 'export', 'true'].includes(program)) return { kind: 'builtin', args: [] };
  return { kind: 'other', args: words };
}

/** Every leaf action replaced and every exit turned into a CommanderError: parse, never run. */
function parseOnly(program: Command): { ran: () => boolean } {
  let ran = false;
  const visit = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    if (cmd.commands.length === 0) cmd.action(() => void (ran = true));
    cmd.commands.forEach(visit);
  };
  visit(program);
  return { ran: () => ran };
}

/** `--help` and `--version` end a parse through commander's exit: a command the docs may show. */
function cleanExit(error: unknown): boolean {
  return (
    error instanceof CommanderError &&
    (error.code === 'commander.helpDisplayed' || error.code === 'commander.version')
  );
}

/** Table notation to a command line: `[--label TEXT]` is shown as optional, `…` elides. */
function fromNotation(args: string[]): string[] {
  return args.map((a) => a.replace(/^\[|\]$/g, '')).filter((a) => a !== '' && a !== '…');
}

/**
 * Parses `args` with the real CLI; the error, or undefined. An inline mention may leave out
 * `--config` (the docs say FLEET_GATEWAY_CONFIG may give it); a shell block may not.
 */
async function parseGatewayArgs(args: string[], mention: boolean): Promise<string | undefined> {
  const program = buildGatewayProgram();
  const { ran } = parseOnly(program);
  const saved = process.env.FLEET_GATEWAY_CONFIG;
  if (mention) process.env.FLEET_GATEWAY_CONFIG = 'gateway.yaml';
  else delete process.env.FLEET_GATEWAY_CONFIG;
  try {
    await program.parseAsync(fromNotation(args), { from: 'user' });
    return ran() ? undefined : 'names a command group, not a command';
  } catch (error) {
    if (cleanExit(error)) return undefined;
    return error instanceof Error ? error.message : String(error);
  } finally {
    if (saved === undefined) delete process.env.FLEET_GATEWAY_CONFIG;
    else process.env.FLEET_GATEWAY_CONFIG = saved;
  }
}

function parseSimulatorArgs(args: string[]): string | undefined {
  const program = buildSimulatorProgram({
    name: 'sim',
    protocolLabel: 'OCPP',
    chargerNoun: 'charge points',
    create: () => {
      throw new Error('parse only');
    },
  });
  parseOnly(program);
  try {
    program.parse(fromNotation(args), { from: 'user' });
    return undefined;
  } catch (error) {
    if (cleanExit(error)) return undefined;
    return error instanceof Error ? error.message : String(error);
  }
}

/** What the docs test itself checks of a command; the problems found. */
async function checkCommand(cmd: SimpleCommand, mention: boolean): Promise<string[]> {
  const problems = cmd.env
    .filter((name) => !new RegExp(`\\b${name}\\b`).test(corpus))
    .map((name) => `environment variable ${name} is read nowhere in src/, test/ or scripts`);
  const { kind, args } = kindOf(cmd.words);
  if ((kind === 'gateway' || kind === 'npm') && args.length === 0 && mention) return problems; // a name
  if (kind === 'gateway') {
    const error = await parseGatewayArgs(args, mention);
    if (error) problems.push(`fleet-gateway ${args.join(' ')}: ${error}`);
  } else if (kind === 'simulator') {
    const error = parseSimulatorArgs(args);
    if (error) problems.push(`${cmd.words.join(' ')}: ${error}`);
  } else if (kind === 'npm') {
    const [sub = '', script = ''] = args;
    const name = sub === 'run' ? script : sub;
    if (!['ci', 'install'].includes(name) && scripts[name] === undefined) {
      problems.push(`npm ${args.join(' ')}: package.json has no script ${name}`);
    }
  } else if (kind === 'vitest') {
    for (const file of args.filter((a) => a.startsWith('test/'))) {
      if (!existsSync(join(ROOT, file))) problems.push(`npx vitest ${file}: no such file`);
    }
  }
  return problems;
}

/** A command the docs test cannot check itself must appear, program and options, in its file. */
function checkedByProblems(block: FencedBlock, cmd: SimpleCommand): string[] {
  const where = `${block.doc}:${block.line}`;
  if (block.checkedBy.join(' ') === 'test/docs.test.ts') {
    return block === mqttExample ? [] : [`${where}: test/docs.test.ts runs no such block`];
  }
  if (block.checkedBy.length === 0) {
    return [
      `${where}: \`${cmd.words.join(' ')}\` is checked nowhere (add <!-- checked-by: FILE -->)`,
    ];
  }
  const problems: string[] = [];
  const texts: string[] = [];
  for (const file of block.checkedBy) {
    const path = resolve(ROOT, file);
    if (!path.startsWith(ROOT + sep) || !existsSync(path)) {
      problems.push(`${where}: checked-by ${file} does not exist in the repository`);
    } else {
      texts.push(readFileSync(path, 'utf8'));
    }
  }
  const text = texts.join('\n');
  for (const word of [cmd.words[0] ?? '', ...flagsOf(cmd.words)]) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (!new RegExp(`(^|[\\s'"\`(\\[])${escaped}(?=[\\s'"\`=)\\],]|$)`, 'm').test(text)) {
      problems.push(`${where}: ${block.checkedBy.join(' ')} does not hold \`${word}\``);
    }
  }
  return problems;
}

describe('shell blocks in README.md and docs/', () => {
  it('are each checked here or tied to the file that runs them, which holds their commands', async () => {
    expect(shellBlocks.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const block of shellBlocks) {
      for (const cmd of shellCommands(block.body, block.lang)) {
        if (cmd.words.length === 0) continue; // an assignment only: TOKEN=$(…)
        const { kind } = kindOf(cmd.words);
        if (kind === 'other') problems.push(...checkedByProblems(block, cmd));
        else {
          for (const p of await checkCommand(cmd, false))
            problems.push(`${block.doc}:${block.line}: ${p}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('would catch a renamed option, command or script (the rule itself)', async () => {
    const bad = [
      'fleet-gateway api-key revoke --config gateway.yaml KEYID',
      'fleet-gateway ledger check --config gateway.yaml',
      'fleet-gateway api-key create --config gateway.yaml --fleet ID --name x',
      'node dist/simulators/ocpp16/cli.js --url ws://x --power 7400',
      'npm run test:crash',
      'CRASH_SEEDZ=5 npm test',
      'npx vitest run test/no-such.test.ts',
    ];
    for (const line of bad) {
      const [cmd] = splitLine(line);
      expect(await checkCommand(cmd as SimpleCommand, false), line).not.toEqual([]);
    }
    const block: FencedBlock = {
      doc: 'x.md',
      line: 1,
      lang: 'sh',
      body: '',
      checkedBy: ['src/demo/demo.ts'],
    };
    expect(
      checkedByProblems(block, splitLine('curl -s --retry 3 http://x')[0] as SimpleCommand),
    ).toEqual(['x.md:1: src/demo/demo.ts does not hold `--retry`']);
    expect(
      checkedByProblems(
        { ...block, checkedBy: ['../outside/service-interface.md'] },
        {
          env: [],
          words: ['curl'],
        },
      )[0],
    ).toMatch(/does not exist in the repository/);
  });
});

describe('command lines shown inline', () => {
  it('every `fleet-gateway …`, `node dist/…` and `npm …` span parses with the real CLI or exists', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const span of spans) {
      for (const cmd of splitLine(span.text)) {
        const { kind } = kindOf(cmd.words);
        if (kind === 'other' || kind === 'builtin') continue;
        checked++;
        for (const p of await checkCommand(cmd, true))
          problems.push(`${span.doc}:${span.line}: ${p}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});

describe('relative links', () => {
  it('resolve to a file inside the repository, and to a heading of it when they name one', () => {
    const problems: string[] = [];
    for (const { doc, prose } of scanned) {
      for (const link of linkTargets(prose)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.text)) continue; // https:, mailto:
        const [file = '', anchor] = link.text.split('#');
        const target = file === '' ? join(ROOT, doc.path) : resolve(ROOT, dirname(doc.path), file);
        const where = `${link.doc}:${link.line} → ${link.text}`;
        if (target !== ROOT && !target.startsWith(ROOT + sep)) {
          problems.push(`${where}: outside the repository`);
        } else if (!existsSync(target)) {
          problems.push(`${where}: no such file`);
        } else if (anchor !== undefined && target.endsWith('.md')) {
          if (!headingAnchors(readFileSync(target, 'utf8')).has(anchor)) {
            problems.push(`${where}: no heading #${anchor} in ${relative(ROOT, target)}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('finds headings the way GitHub anchors them', () => {
    const anchors = headingAnchors(
      '# Fleet\n## `POST /v1/sessions` — `Authorization: Bearer <DRIVER_TOKEN>`\n## Money\n## Money\n```\n# not\n```',
    );
    expect([...anchors]).toEqual([
      'fleet',
      'post-v1sessions--authorization-bearer-driver_token',
      'money',
      'money-1',
    ]);
  });
});

describe('tracker references', () => {
  it('README.md and docs/ cite no issue by number: they name what it was about', () => {
    const found = docs.flatMap(trackerReferences).map((l) => `${l.doc}:${l.line}: ${l.text}`);
    expect(found).toEqual([]);
  });

  it('would catch the forms once written, and leaves links to other projects alone', () => {
    const doc = (text: string) => trackerReferences({ path: 'x.md', text }).length;
    expect(doc("Issue 30's goals")).toBe(1);
    expect(doc('| Goal (issue 30) |')).toBe(1);
    expect(doc('see issue #13')).toBe(1);
    expect(doc('<https://github.com/matth-x/MicroOcpp/issues/51>')).toBe(0);
    expect(doc('the performance goals')).toBe(0);
  });
});

describe('the cheap, safe commands the docs show, run for real against a temp database', () => {
  let dir: string;
  const FLEET = 'demo-fleet';
  const run = (args: string[], input?: string) =>
    execFileSync(process.execPath, [CLI, ...args], {
      cwd: dir,
      encoding: 'utf8',
      input: input ?? '',
      env: { ...process.env, FLEET_GATEWAY_CONFIG: '' },
    });

  beforeAll(() => {
    // The docs' own file names work as printed: gateway.yaml, seed.json, config/demo.yaml.
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-docs-'));
    const demo = parseYaml(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as {
      database: { path: string };
    };
    writeFileSync(
      join(dir, 'gateway.yaml'),
      stringifyYaml({ ...demo, database: { path: 'gateway.db' } }),
    );
    mkdirSync(join(dir, 'config'));
    writeFileSync(
      join(dir, 'config', 'demo.yaml'),
      stringifyYaml({ ...demo, database: { path: '../demo.db' } }),
    );
    writeFileSync(join(dir, 'seed.json'), readFileSync(join(ROOT, 'config/demo-seed.json')));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh key of the demo fleet and its key id (from `api-key list`), for rotate and revoke. */
  function freshKeyId(): string {
    const label = `docs-${Math.random().toString(36).slice(2)}`;
    run(['api-key', 'create', '--config', 'gateway.yaml', '--fleet', FLEET, '--label', label]);
    const line = run(['api-key', 'list', '--config', 'gateway.yaml', '--fleet', FLEET])
      .split('\n')
      .find((l) => l.endsWith(label));
    return line?.split(/\s+/)[0] ?? '';
  }

  /** The docs' placeholders, made real. */
  function realArgs(args: string[]): string[] {
    return fromNotation(args).map((a) => {
      if (a === 'ID') return FLEET;
      if (a === 'KEYID') return freshKeyId();
      if (a === 'TEXT') return 'from the docs';
      if (a === 'H') return '1';
      if (a === 'PASSWORD') return 'docs-charger-password-01';
      return a;
    });
  }

  const SAFE = [
    ['seed'],
    ['ledger', 'verify'],
    ['api-key', 'create'],
    ['api-key', 'list'],
    ['api-key', 'rotate'],
    ['api-key', 'revoke'],
    ['hash-password'],
  ];
  const phase = (args: string[]) => {
    if (args.includes('--help')) return SAFE.length;
    return SAFE.findIndex((path) => path.every((word, i) => args[i] === word));
  };

  it('seed, ledger verify, api-key create/list/rotate/revoke and hash-password succeed as shown', () => {
    const shown = new Map<string, string[]>();
    const add = (words: string[], where: string) => {
      const { kind, args } = kindOf(words);
      if (kind !== 'gateway' || phase(args) < 0) return;
      // A mention without --config runs with the one the examples use.
      const full =
        args.includes('--config') || args.includes('--help') || args[0] === 'hash-password'
          ? args
          : [...args, '--config', 'gateway.yaml'];
      // The same command with the same options shown twice runs once (each is parsed above).
      const path = full.filter((w) => /^[a-z][a-z-]*$/.test(w)).slice(0, 2);
      const key = [...path, ...flagsOf(full).sort(), full.length].join(' ');
      if (!shown.has(key)) shown.set(key, [...full, where]);
    };
    for (const block of shellBlocks) {
      for (const cmd of shellCommands(block.body, block.lang))
        add(cmd.words, `${block.doc}:${block.line}`);
    }
    for (const span of spans)
      for (const cmd of splitLine(span.text)) add(cmd.words, `${span.doc}:${span.line}`);
    // Seed first: every other command needs the fleet.
    const ordered = [...shown.values()].sort((a, b) => phase(a) - phase(b));
    expect(
      ordered.map((a) => phase(a)).filter((p, i, all) => all.indexOf(p) === i).length,
    ).toBeGreaterThanOrEqual(SAFE.length);
    for (const entry of ordered) {
      const where = entry.pop() as string;
      const args = realArgs(entry);
      let out: string;
      try {
        out = run(args, 'docs-charger-password-02\n');
      } catch (error) {
        throw new Error(`${where}: fleet-gateway ${args.join(' ')} failed: ${String(error)}`);
      }
      if (args[0] === 'seed') expect(out, where).toMatch(/^seeded: \d+ fleets, \d+ API keys/);
      if (args[0] === 'ledger') expect(out, where).toMatch(/ok/);
      if (args[0] === 'hash-password') expect(out, where).toMatch(/^scrypt/);
    }
    // And what they did holds together.
    expect(run(['ledger', 'verify', '--config', 'gateway.yaml'])).not.toMatch(/FAIL/);
  }, 180_000); // about 15 node processes: seconds each on a loaded machine

  it('--help works as the docs say: the gateway lists every command, the simulators their flags', () => {
    const help = run(['--help']);
    for (const cmd of buildGatewayProgram().commands) expect(help).toContain(cmd.name());
    const simulators = spans
      .flatMap((span) => splitLine(span.text))
      .filter((cmd) => kindOf(cmd.words).kind === 'simulator' && cmd.words.includes('--help'));
    expect(simulators.length).toBe(2);
    for (const cmd of simulators) {
      const out = execFileSync(process.execPath, cmd.words.slice(1), {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(out, cmd.words.join(' ')).toContain('--url');
    }
  });

  it("the Commands table's revoke, as printed before the fix, is refused", async () => {
    expect(
      await parseGatewayArgs('api-key revoke --config gateway.yaml KEYID'.split(' '), false),
    ).toMatch(/--fleet/);
  });
});

/** `"key":value` pairs with a scalar value in a payload as the docs abbreviate it (`…` elides). */
function shownPairs(text: string): [string, unknown][] {
  const pairs: [string, unknown][] = [];
  for (const m of text.matchAll(/"(\w+)":("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)) {
    const [key = '', raw = ''] = [m[1], m[2]];
    // Ids, sequence numbers and times differ on every run.
    if (raw.includes('…') || ['id', 'seq', 'at', 'createdAt', 'ledgerEntryId'].includes(key))
      continue;
    pairs.push([key, JSON.parse(raw) as unknown]);
  }
  return pairs;
}

function holds(value: unknown, key: string, expected: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  if (key in record && record[key] === expected) return true;
  return Object.values(record).some((v) => holds(v, key, expected));
}

describe('the MQTT worked example (docs/mqtt.md), published to a gateway of site lagos-depot-01', () => {
  const PREFIX = 'fleetgw/lagos-depot-01/';
  let broker: TestBroker;
  let t: TestGateway;
  let cloud: Cloud;
  beforeAll(async () => {
    broker = await startBroker();
    t = await startTestGateway({
      siteId: 'lagos-depot-01',
      uplink: { url: broker.url, reconnectSeconds: 0.2 },
    });
    cloud = await Cloud.connect(broker.url, PREFIX, 'docs-worked-example');
  });
  afterAll(async () => {
    await cloud?.close();
    await t?.close();
    await broker?.close();
  });

  it('each command gets the replies and ledger entries the example shows', async () => {
    expect(mqttExample).toBeDefined();
    const lines = (mqttExample?.body ?? '').replace(/\\\n/g, ' ').split('\n');
    let since = 0;
    let published = 0;
    for (const line of lines) {
      const shown = /^#\s+(fleetgw\/\S+)\s+(\{.*)$/.exec(line);
      if (shown) {
        const [topic = '', payload = ''] = [shown[1], shown[2]];
        if (topic.startsWith(`${PREFIX}status/`)) continue; // needs the example's own charger
        const pairs = shownPairs(payload);
        expect(pairs.length, line).toBeGreaterThan(0);
        await waitUntil(
          () =>
            cloud.received
              .slice(since)
              .some((m) => m.topic === topic && pairs.every(([k, v]) => holds(m.body, k, v))),
          10_000,
          `${topic} ${payload}`,
        );
        continue;
      }
      for (const cmd of splitLine(line)) {
        const [program, ...args] = cmd.words;
        const value = (flag: string) => args[args.indexOf(flag) + 1];
        if (program === 'mosquitto_sub') expect(value('-t')).toBe(`${PREFIX}#`);
        if (program !== 'mosquitto_pub') continue;
        expect(value('-t')).toBe(`${PREFIX}commands`);
        since = cloud.received.length;
        await cloud.client.publishAsync(value('-t') ?? '', value('-m') ?? '', { qos: 1 });
        published++;
      }
    }
    expect(published).toBe(4);
    expect(cloud.schemaErrors).toEqual([]);
  });
});
