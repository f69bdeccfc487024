#!/usr/bin/env node
import { buildProgram } from './cli-program.js';

buildProgram()
  .parseAsync()
  .catch((err: unknown) => {
    console.error(`fleet-gateway: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
