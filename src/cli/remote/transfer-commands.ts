import { openAsBlob } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
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

const BASE64_TEXT = /^[A-Za-z0-9+/]+={0,2}$/;

/** A signature file as base64: kept as it is when it holds base64 text, else its bytes encoded. */
async function signatureOf(file: string): Promise<string> {
  const bytes = await readFile(file);
  const text = bytes.toString('latin1').replace(/\s+/g, '');
  return BASE64_TEXT.test(text) && text.length % 4 === 0 ? text : bytes.toString('base64');
}

/** `… delete FILEID`: a firmware file or log and its bytes, gone (refused while a job uses it). */
function deleteCommand(parent: Command, what: string): void {
  remote(
    parent,
    'delete',
    `delete ${what} from the gateway (refused while an unfinished job uses it)`,
  )
    .argument('<fileId>')
    .action(
      withClient(
        (client, _opts: RemoteOptions, fileId: string) =>
          client.send<TransferFile>('DELETE', path('files', fileId)),
        (f: TransferFile) => `deleted ${f.kind} ${f.fileId} (${f.name})`,
      ),
    );
}

/** `fleet-gateway firmware …`, `logs …` and `transfers …`: firmware and logs over the site LAN. */
export function registerTransferCommands(program: Command): void {
  const firmware = program
    .command('firmware')
    .description('firmware files served to chargers, and firmware updates');
  remote(firmware, 'upload', 'upload a firmware file to the gateway, signed or not')
    .argument('<file>')
    .option('--name <name>', 'the name chargers see (default the file’s own)')
    .option('--signing-certificate <pem>', 'signed firmware: the signing certificate (PEM file)')
    .option('--signature <file>', 'signed firmware: its signature (base64 text or raw bytes)')
    .action(
      withClient(
        async (
          client,
          opts: RemoteOptions & { name?: string; signingCertificate?: string; signature?: string },
          file: string,
        ) =>
          client.upload<TransferFile>(
            '/firmware',
            {
              name: opts.name ?? basename(file),
              signingCertificate:
                opts.signingCertificate === undefined
                  ? undefined
                  : await readFile(opts.signingCertificate, 'utf8'),
              signature:
                opts.signature === undefined ? undefined : await signatureOf(opts.signature),
            },
            await openAsBlob(file),
          ),
        (f: TransferFile) =>
          `firmware ${f.fileId}: ${f.name}, ${f.sizeBytes} bytes, sha256 ${f.sha256}${f.signed ? ', signed' : ''}`,
      ),
    );
  deleteCommand(firmware, 'a firmware file');
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
  deleteCommand(logs, 'a log');
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
  remote(
    transfers,
    'cancel',
    'cancel an unfinished job: its URL is no longer served (the charger is sent nothing)',
  )
    .argument('<jobId>')
    .action(
      withClient(
        (client, _opts: RemoteOptions, jobId: string) =>
          client.send<{ job: TransferJob }>('POST', `${path('transfer-jobs', jobId)}/cancel`),
        (a: { job: TransferJob }) => `job ${a.job.jobId} on ${a.job.chargerId}: ${a.job.status}`,
      ),
    );
}
