import { isAbsolute, relative } from 'node:path';

/** Words as one line a shell reads back into the same words, for a command printed to paste. */
export function shellCommand(words: readonly string[]): string {
  return words
    .map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}

/** `path` as a user in `cwd` would type it: relative below `cwd`, absolute elsewhere. */
export function typedPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
