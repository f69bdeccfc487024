import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What a process's heap grew by between two V8 heap snapshots (the OCPP section writes them with
 * BENCH_OCPP_HEAP_DIR=dir: heap-<pid>-1 before the chargers connect, heap-<pid>-2 after), per
 * charger: node count and self size by constructor name; closures by function name and where they
 * are defined (script:line), and closure contexts by the function that first closes over them.
 *   npm run bench -- --only ocpp    (with BENCH_OCPP_HEAP_DIR=/tmp/heap BENCH_OCPP_SIZES=2000)
 *   node dist-bench/test/bench/ocpp/heap-diff.js before.heapsnapshot after.heapsnapshot [chargers] [rows] [--detail]
 * --detail splits plain objects by their property names, and arrays, hidden nodes and heap numbers
 * by what holds them (first retainer and the edge's name).
 * Self sizes only: what a charger holds through a row is not added to it (V8 counts a Map's
 * backing store as its own `system / FixedArray` or hash table node, for instance).
 */

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

/** Node count and self size per kind of node (its type and name; closures by where defined). */
export function groups(file: string, detail = false): Map<string, Group> {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { meta } = heap.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const types = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = heap;
  const count = nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) {
    firstEdge[i + 1] = (firstEdge[i] as number) + (nodes[i * nf + nEdges] as number) * ef;
  }
  const typeOf = (i: number) => types[nodes[i * nf + nType] as number] as string;
  const nameOf = (i: number) => strings[nodes[i * nf + nName] as number] as string;
  /** The node a named edge of node i leads to (`to_node` is an index into `nodes`). */
  const edge = (i: number, name: string): number | undefined => {
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += ef) {
      const kind = edgeTypes[edges[e + eType] as number];
      if (kind !== 'element' && kind !== 'hidden' && strings[edges[e + eName] as number] === name) {
        return (edges[e + eTo] as number) / nf;
      }
    }
    return undefined;
  };
  const whereDefined = (closure: number): string => {
    const shared = edge(closure, 'shared');
    const script = shared === undefined ? undefined : edge(shared, 'script');
    const source = script === undefined ? undefined : edge(script, 'name');
    return source === undefined ? '?' : basename(nameOf(source));
  };
  // Each context by the first closure that holds it.
  const contextOwner = new Map<number, string>();
  const closureKey = (i: number) => `closure ${nameOf(i) || '(anonymous)'} @ ${whereDefined(i)}`;
  for (let i = 0; i < count; i++) {
    if (typeOf(i) !== 'closure') continue;
    const context = edge(i, 'context');
    if (context !== undefined && !contextOwner.has(context))
      contextOwner.set(context, closureKey(i));
  }
  // Each node's first retainer and the edge's name: what holds an array or a plain object.
  const holder = new Int32Array(count).fill(-1);
  const holderEdge = new Int32Array(count).fill(-1);
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += ef) {
      const to = (edges[e + eTo] as number) / nf;
      if (holder[to] !== -1 || edgeTypes[edges[e + eType] as number] === 'weak') continue;
      holder[to] = i;
      holderEdge[to] = e;
    }
  }
  const heldBy = (i: number, depth = 0): string => {
    const h = holder[i] as number;
    if (h < 0) return '?';
    // A collection's store by the collection's own holder: which Map, not just "a Map".
    const outer =
      depth < 2 && ['Map', 'Set', 'Array'].includes(nameOf(h)) ? ` in ${heldBy(h, depth + 1)}` : '';
    const e = holderEdge[i] as number;
    const kind = edgeTypes[edges[e + eType] as number];
    const via =
      kind === 'element' || kind === 'hidden'
        ? `[${edges[e + eName]}]`
        : strings[edges[e + eName] as number];
    return `${typeOf(h) === 'closure' ? closureKey(h) : nameOf(h)}.${via}${outer}`;
  };
  /** A plain object by its own property names (its shape, roughly). */
  const shape = (i: number): string => {
    const names: string[] = [];
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += ef) {
      if (edgeTypes[edges[e + eType] as number] === 'property') {
        names.push(strings[edges[e + eName] as number] as string);
      }
    }
    return names.slice(0, 8).join(',');
  };
  const out = new Map<string, Group>();
  for (let i = 0; i < count; i++) {
    const type = typeOf(i);
    let key: string;
    if (detail && type === 'object' && nameOf(i) === 'Object') key = `object {${shape(i)}}`;
    else if (detail && (type === 'array' || type === 'hidden' || type === 'number')) {
      key = `${type} ${nameOf(i)} held by ${heldBy(i)}`;
    } else if (type === 'closure') key = closureKey(i);
    else if (nameOf(i) === 'system / Context') {
      key = `context of ${contextOwner.get(i)?.slice('closure '.length) ?? '?'}`;
    } else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      key = `(${type})`;
    } else key = `${type} ${nameOf(i)}`;
    const g = out.get(key) ?? { count: 0, bytes: 0 };
    g.count += 1;
    g.bytes += nodes[i * nf + nSize] as number;
    out.set(key, g);
  }
  return out;
}

/** Rows of after minus before, largest growth in bytes first, per charger when `per` is given. */
export function diff(before: Map<string, Group>, after: Map<string, Group>, per = 1): string[] {
  const rows: [string, number, number][] = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { count: 0, bytes: 0 };
    rows.push([key, (a.count - b.count) / per, (a.bytes - b.bytes) / per]);
  }
  rows.sort((x, y) => y[2] - x[2]);
  const total = rows.reduce((s, r) => s + r[2], 0);
  return [
    `total ${total.toFixed(0)} B, ${rows.reduce((s, r) => s + r[1], 0).toFixed(1)} nodes`,
    ...rows.map(
      ([key, n, bytes]) => `${bytes.toFixed(0).padStart(8)} B ${n.toFixed(2).padStart(8)}  ${key}`,
    ),
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const detail = process.argv.includes('--detail');
  const [before, after, chargers = '1', top = '60'] = process.argv
    .slice(2)
    .filter((a) => a !== '--detail');
  if (!before || !after) {
    console.error('usage: heap-diff.js before.heapsnapshot after.heapsnapshot [chargers] [rows]');
    process.exit(2);
  }
  const lines = diff(groups(before, detail), groups(after, detail), Number(chargers));
  console.log(lines.slice(0, Number(top) + 1).join('\n'));
}
