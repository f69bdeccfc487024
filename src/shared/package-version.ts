import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The gateway's version, from the nearest package.json above this file: the code runs from dist/,
 * from the bench's dist-bench/src/ and from src/ under vitest, each a different depth below it.
 */
export function packageVersion(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file))
      return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${import.meta.dirname}`);
  }
}
