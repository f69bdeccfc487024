#!/usr/bin/env node
// Only the version check is imported statically: on a Node the SQLite addon was not built for,
// loading it crashes the process (a segmentation fault on Node 20) before any error can be said.
// A default import: Node 20's node:module has no enableCompileCache, and a missing named export
// would fail before the refusal below could say why.
import nodeModule from 'node:module';
import { refuseUnsupportedNode } from './shared/supported-node.js';

refuseUnsupportedNode();
// V8's compiled code of the modules a command loads (ours, about 330, and the libraries') kept on
// disk between starts, checked against each file's contents: compiling them anew was about 45 ms
// of a gateway's start (docs/benchmarks.md). Its folder is Node's default (NODE_COMPILE_CACHE,
// else the system's temporary one); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
nodeModule.enableCompileCache();
await import('./cli/main.js');
