import { readFileSync } from 'node:fs';

export interface TlsFiles {
  cert: string;
  key: string;
  ca?: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

/** Reads PEM files once at start-up; a missing or unreadable file stops the gateway with its name. */
export function readTlsFiles(files: TlsFiles, what: string): TlsMaterial {
  const read = (path: string, role: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`${what}: cannot read ${role} ${path}: ${(err as Error).message}`);
    }
  };
  return {
    cert: read(files.cert, 'cert'),
    key: read(files.key, 'key'),
    ...(files.ca === undefined ? {} : { ca: read(files.ca, 'ca') }),
  };
}
