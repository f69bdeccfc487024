#!/usr/bin/env node
// Only the version check is imported statically: on a Node the SQLite addon was not built for,
// loading it crashes the process (a segmentation fault on Node 20) before any error can be said.
import { refuseUnsupportedNode } from './shared/supported-node.js';

refuseUnsupportedNode();
await import('./cli/main.js');
