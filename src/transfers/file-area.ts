import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import type { ReadStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { TransferKind } from './transfer-store.js';

/** A body went past its size limit; nothing was kept. */
export class TooLargeError extends Error {}

export interface StoredBytes {
  sizeBytes: number;
  sha256: string;
}

/**
 * The folder the transfers' bytes live in: one subfolder per kind, each file named by its id
 * (never by a name a client sent). A file appears whole or not at all: written aside, then renamed.
 */
export class FileArea {
  constructor(private readonly directory: string) {}

  path(kind: TransferKind, fileId: string): string {
    return join(this.directory, kind, fileId);
  }

  async write(
    kind: TransferKind,
    fileId: string,
    body: Readable | Buffer,
    maxBytes: number,
  ): Promise<StoredBytes> {
    mkdirSync(join(this.directory, kind), { recursive: true });
    const final = this.path(kind, fileId);
    const partial = `${final}.part`;
    const hash = createHash('sha256');
    let size = 0;
    const out = createWriteStream(partial);
    // Not a pipeline: on a body past the limit the request must stay open for the 413 answer.
    const chunks = Buffer.isBuffer(body) ? [body] : body.iterator({ destroyOnReturn: false });
    try {
      for await (const chunk of chunks) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        if (size > maxBytes) throw new TooLargeError(`larger than ${maxBytes} bytes`);
        hash.update(bytes);
        if (!out.write(bytes)) await once(out, 'drain');
      }
      out.end();
      await finished(out);
      renameSync(partial, final);
    } catch (err) {
      out.destroy();
      rmSync(partial, { force: true });
      throw err;
    }
    return { sizeBytes: size, sha256: hash.digest('hex') };
  }

  remove(kind: TransferKind, fileId: string): void {
    rmSync(this.path(kind, fileId), { force: true });
  }

  read(kind: TransferKind, fileId: string): ReadStream {
    return createReadStream(this.path(kind, fileId));
  }
}
