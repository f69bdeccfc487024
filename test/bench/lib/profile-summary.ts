import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF, BENCH_OCPP_CPU_PROF or node --cpu-prof) as
 * self time by function, by file, and by owner (a node_modules package, node's internals, native
 * code, the project's own folders, or V8's (garbage collector) / (program) / (idle)):
 *
 *   npm run bench -- --only none   # or any build of tsconfig.bench.json
 *   node dist-bench/test/bench/lib/profile-summary.js FILE.cpuprofile [--top N] [--per MSGS]
 *
 * --per divides every row by a message count (the bench prints the window's messages), giving µs
 * per message beside the share. Shares are of the busy time: (idle) is shown but not counted in it.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

type Tally = Map<string, number>;

function add(tally: Tally, key: string, us: number): void {
  tally.set(key, (tally.get(key) ?? 0) + us);
}

function pathOf(url: string): string {
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice(7)) : url;
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

/** Who owns a frame: a package, node's internals, native code, V8 itself, or a project folder. */
function ownerOf(frame: CallFrame): string {
  const { functionName, url } = frame;
  if (url === '') return /^\(.*\)$/.test(functionName) ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return `pkg ${pkg[1]}`;
  const path = pathOf(url).split('/');
  return path.length > 2 ? path.slice(0, path.length - 1).join('/') + '/' : path.join('/');
}

function fileOf(frame: CallFrame): string {
  return frame.url === '' ? ownerOf(frame) : pathOf(frame.url);
}

function functionOf(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  return `${name}  ${fileOf(frame)}:${frame.lineNumber + 1}`;
}

/** Self time in µs per node: each sample owns the interval up to the next sample. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const self = new Map<number, number>();
  let mean = 0;
  for (let i = 1; i < deltas.length; i++) mean += deltas[i] ?? 0;
  mean = deltas.length > 1 ? mean / (deltas.length - 1) : 0;
  samples.forEach((id, i) => {
    const us = deltas[i + 1] ?? mean;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, us));
  });
  return self;
}

function printTable(title: string, tally: Tally, busy: number, top: number, per: number): void {
  console.log(`\n${title}`);
  const rows = [...tally.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [key, us] of rows) {
    const share = busy > 0 ? ((100 * us) / busy).toFixed(1).padStart(5) : '    -';
    const ms = (us / 1000).toFixed(1).padStart(9);
    const perMsg = per > 0 ? `${(us / per).toFixed(2).padStart(8)} µs/msg` : '';
    console.log(`${share} % ${ms} ms${perMsg}  ${key}`);
  }
}

function main(argv: string[]): void {
  const file = argv.find((a) => !a.startsWith('--'));
  const flag = (name: string): number => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : 0;
  };
  if (!file) {
    console.error('usage: profile-summary FILE.cpuprofile [--top N] [--per MSGS]');
    process.exit(2);
  }
  const top = flag('--top') || 30;
  const per = flag('--per');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction: Tally = new Map();
  const byFile: Tally = new Map();
  const byOwner: Tally = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfTimes(profile)) {
    const frame = frames.get(id);
    if (!frame) continue;
    total += us;
    if (frame.functionName === '(idle)') idle += us;
    add(byFunction, functionOf(frame), us);
    add(byFile, fileOf(frame), us);
    add(byOwner, ownerOf(frame), us);
  }
  const busy = total - idle;
  const byCaller = nativeByCaller(profile, frames);
  console.log(
    `${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy` +
      (per > 0 ? `, ${(busy / per).toFixed(2)} µs busy per message over ${per} messages` : ''),
  );
  printTable(
    'Self time by owner (package, node internals, V8, project folder)',
    byOwner,
    busy,
    top,
    per,
  );
  printTable('Self time by file', byFile, busy, top, per);
  printTable('Self time by function', byFunction, busy, top, per);
  printTable(
    "Native self time (SQLite's statements, socket writes…) by the project's nearest caller",
    byCaller,
    busy,
    top,
    per,
  );
}

/**
 * Native code (a better-sqlite3 statement, a socket write) has no file: its self time is charged
 * here to the nearest caller in the project's own code (src/, not node_modules), so a statement's
 * time shows under the store method that runs it.
 */
function nativeByCaller(profile: CpuProfile, frames: Map<number, CallFrame>): Tally {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const own = (f: CallFrame) =>
    f.url !== '' && !f.url.includes('node_modules') && !f.url.startsWith('node:');
  const tally: Tally = new Map();
  for (const [id, us] of selfTimes(profile)) {
    const frame = frames.get(id);
    if (!frame || ownerOf(frame) !== '(native)') continue;
    let up = parent.get(id);
    while (up !== undefined && !own(frames.get(up) as CallFrame)) up = parent.get(up);
    const caller = up === undefined ? '(none)' : functionOf(frames.get(up) as CallFrame);
    add(tally, `${frame.functionName} ← ${caller}`, us);
  }
  return tally;
}

main(process.argv.slice(2));
