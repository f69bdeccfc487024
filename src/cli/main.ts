// The command line proper, imported by src/cli.ts once the Node running it is one it supports.
import { buildProgram } from './program.js';

buildProgram()
  .parseAsync()
  .catch((err: unknown) => {
    console.error(`fleet-gateway: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
