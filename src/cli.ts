#!/usr/bin/env node
// Only the version check is imported statically: on a Node the SQLite addon was not built for,
// loading it crashes the process (a segmentation fault on Node 20) before any error can be said.
import { enableCompileCache } from 'node:module';
import { refuseUnsupportedNode } from './shared/supported-node.js';

refuseUnsupportedNode();
// V8's compiled code of the modules a command loads (ours, about 330, and the libraries') kept on
// disk between starts, checked against each file's contents: a third of the gateway's start-up
// was compiling them anew each time. Its folder is Node's default (NODE_COMPILE_CACHE, else the
// system's temporary one); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache();
await import('./cli/main.js');
