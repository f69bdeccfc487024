import type { Clock } from '../shared/clock.js';
import { TransferError } from './errors.js';
import type { FileArea } from './file-area.js';
import type { TransferFile, TransferKind, TransferStore } from './transfer-store.js';

/**
 * Which files go and when: an operator's delete and retention's. The row stays (jobs name the
 * file), the bytes go; never while an unfinished job uses the file (the schema refuses it too).
 */
export class FileKeeping {
  constructor(
    private readonly store: TransferStore,
    private readonly area: FileArea,
    private readonly clock: Clock,
  ) {}

  /** Deletes a kept file and its bytes; refused while an unfinished job uses it. */
  deleteFile(fileId: string, by: string): TransferFile {
    const file = this.store.file(fileId);
    if (!file) throw new TransferError('file_not_found', `no file with id ${fileId}`);
    const outcome = this.store.deleteFile(fileId, by, new Date(this.clock.now()).toISOString());
    if (outcome !== 'deleted') {
      throw outcome === 'in_use'
        ? new TransferError(
            'file_in_use',
            `file ${fileId} is used by an unfinished job: cancel it or wait until it ends`,
          )
        : new TransferError('file_not_found', `no file with id ${fileId}`);
    }
    this.area.remove(file.kind, fileId);
    return file;
  }

  /**
   * Deletes files of a kind unused for `days` (retention; 0 keeps them): a log from its upload,
   * a firmware file from its latest job. Never one an unfinished job uses.
   */
  pruneFiles(kind: TransferKind, days: number): number {
    if (days <= 0) return 0;
    const before = new Date(this.clock.now() - days * 86_400_000).toISOString();
    let deleted = 0;
    for (const fileId of this.store.unusedSince(kind, before, 1000)) {
      if (
        this.store.deleteFile(fileId, 'retention', new Date(this.clock.now()).toISOString()) !==
        'deleted'
      )
        continue;
      this.area.remove(kind, fileId);
      deleted += 1;
    }
    return deleted;
  }
}
