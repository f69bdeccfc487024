import { openAsBlob } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import type { TransferFile, TransferJob } from '../../transfers/transfer-store.js';
import type { JobAnswer } from '../../transfers/transfers.js';
import { remote, withClient, type RemoteOptions } from './operator-commands.js';
import { formatTable } from './client.js';

const FILE_COLUMNS = [
  'fileId',
  'name',
  'sizeBytes',
  'chargerId',
  'jobId',
  'createdBy',
  'createdAt',
];
const JOB_COLUMNS = [
  'jobId',
  'chargerId',
  'kind',
  'status',
  'finished',
  'requestedBy',
  'updatedAt',
];

/** A job the charger did not take exits with 2, as the charger commands do. */
function jobLine(answer: JobAnswer): string {
  if (!answer.accepted) process.exitCode = 2;
  return `job ${answer.job.jobId} on ${answer.job.chargerId}: ${answer.status} (${answer.accepted ? 'taken' : 'not taken'} by the charger)`;
}

const path = (...parts: (string | number)[]) =>
  parts.map((p) => `/${encodeURIComponent(String(p))}`).join('');

/** `fleet-gateway firmware …`, `logs …` and `transfers …`: firmware and logs over the site LAN. */
export function registerTransferCommands(program: Command): void {
  const firmware = program
    .command('firmware')
    .description('firmware files served to chargers, and firmware updates');
  remote(firmware, 'upload', 'upload a firmware file to the gateway')
    .argument('<file>')
    .option('--name <name>', 'the name chargers see (default the file’s own)')
    .action(
      withClient(
        async (client, opts: RemoteOptions & { name?: string }, file: string) =>
          client.upload<TransferFile>(
            '/firmware',
            { name: opts.name ?? basename(file) },
            await openAsBlob(file),
          ),
        (f: TransferFile) =>
          `firmware ${f.fileId}: ${f.name}, ${f.sizeBytes} bytes, sha256 ${f.sha256}`,
      ),
    );
  remote(firmware, 'list', 'the firmware files on the gateway').action(
    withClient(
      (client) => client.get('/firmware'),
      (a: { files: TransferFile[] }) => formatTable(a.files as never, FILE_COLUMNS),
    ),
  );
  remote(firmware, 'update', 'tell a charger to install a firmware file (refused during a session)')
    .argument('<chargerId>')
    .argument('<fileId>')
    .option('--at <time>', 'ISO 8601 time from which the charger may fetch it (default now)')
    .action(
      withClient(
        (client, opts: RemoteOptions & { at?: string }, chargerId: string, fileId: string) =>
          client.send<JobAnswer>('POST', `${path('chargers', chargerId)}/firmware-update`, {
            fileId,
            ...(opts.at === undefined ? {} : { retrieveAt: opts.at }),
          }),
        jobLine,
      ),
    );

  const logs = program.command('logs').description('chargers’ diagnostics and logs');
  remote(logs, 'request', 'ask a charger to upload its diagnostics (1.6) or log (2.0.1)')
    .argument('<chargerId>')
    .action(
      withClient(
        (client, _opts: RemoteOptions, chargerId: string) =>
          client.send<JobAnswer>('POST', `${path('chargers', chargerId)}/log-request`),
        jobLine,
      ),
    );
  remote(logs, 'list', 'the logs chargers uploaded').action(
    withClient(
      (client) => client.get('/logs'),
      (a: { files: TransferFile[] }) => formatTable(a.files as never, FILE_COLUMNS),
    ),
  );
  remote(logs, 'download', 'save an uploaded log (or a firmware file) to a file')
    .argument('<fileId>')
    .requiredOption('--out <file>', 'where to write it')
    .action(
      withClient(
        async (client, opts: RemoteOptions & { out: string }, fileId: string) => {
          const res = await client.download(path('files', fileId));
          const bytes = Buffer.from(await res.arrayBuffer());
          await writeFile(opts.out, bytes);
          return { fileId, out: opts.out, sizeBytes: bytes.length };
        },
        (a: { out: string; sizeBytes: number }) => `${a.sizeBytes} bytes written to ${a.out}`,
      ),
    );

  const transfers = program
    .command('transfers')
    .description('firmware and log jobs with the status chargers reported');
  remote(transfers, 'list', 'jobs, newest first')
    .option('--charger <chargerId>', 'only this charger’s')
    .option('--kind <kind>', 'firmware or log')
    .action(
      withClient(
        (client, opts: RemoteOptions & { charger?: string; kind?: string }) =>
          client.get('/transfer-jobs', { chargerId: opts.charger, kind: opts.kind }),
        (a: { jobs: TransferJob[] }) => formatTable(a.jobs as never, JOB_COLUMNS),
      ),
    );
  remote(transfers, 'show', 'one job and every status the charger reported')
    .argument('<jobId>')
    .action(
      withClient(
        (client, _opts: RemoteOptions, jobId: string) => client.get(path('transfer-jobs', jobId)),
        (a: {
          job: TransferJob;
          history: { status: string; detail: string | null; at: string }[];
        }) => formatTable(a.history as never, ['at', 'status', 'detail']),
      ),
    );
}
