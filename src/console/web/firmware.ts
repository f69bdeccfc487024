import { useEffect, useState } from 'preact/hooks';
import type { TransferFile, TransferJob } from '../../transfers/transfer.js';
import { api } from './api';
import { time } from './format';
import type { ChargerView } from './types';
import { ConfirmButton, ErrorText, html, Loading, useData } from './ui';

interface JobAnswer {
  job: TransferJob;
  status: string;
  accepted: boolean;
}

interface Overview {
  firmware: TransferFile[];
  logs: TransferFile[];
  jobs: TransferJob[];
  chargers: ChargerView[];
}

/** While a job runs, its statuses arrive every few seconds: the view asks again this often. */
const REFRESH_MS = 2000;

const size = (bytes: number) =>
  bytes >= 1_048_576
    ? `${(bytes / 1_048_576).toFixed(1)} MB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} kB`
      : `${bytes} B`;

/** A signature file as base64: its text when it is base64 already, else its bytes encoded. */
async function signatureText(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const text = new TextDecoder('latin1').decode(bytes).replace(/\s+/g, '');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0) return text;
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

const answerText = (a: JobAnswer) =>
  `Job ${a.job.jobId}: the charger answered ${a.status}${a.accepted ? '' : ' (not taken)'}.`;

/** Firmware files, sending one to a charger, asking a charger for its log, and every job. */
export function FirmwareView(props: { canAct: boolean }) {
  const data = useData<Overview>(async () => {
    const [firmware, logs, jobs, chargers] = await Promise.all([
      api.get<{ files: TransferFile[] }>('/firmware'),
      api.get<{ files: TransferFile[] }>('/logs'),
      api.get<{ jobs: TransferJob[] }>('/transfer-jobs?limit=50'),
      api.get<{ chargers: ChargerView[] }>('/chargers'),
    ]);
    return {
      firmware: firmware.files,
      logs: logs.files,
      jobs: jobs.jobs,
      chargers: chargers.chargers,
    };
  }, 'firmware');
  const running = data.data?.jobs.some((j) => !j.finished) ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(data.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [running]);
  const [shown, setShown] = useState<number | null>(null);

  if (data.data === null) {
    return html`<h1>Firmware and logs</h1>
      <${ErrorText}
        error=${data.error}
      />${data.error ? null : html`<${Loading} what="firmware and logs" />`}`;
  }
  const d = data.data;
  return html`
    <h1>Firmware and logs</h1>
    <${ErrorText} error=${data.error} />
    ${props.canAct ? html`<${Actions} data=${d} onDone=${data.reload} />` : null}
    <h2>Jobs</h2>
    ${
      d.jobs.length === 0
        ? html`<p class="muted">No firmware update or log request yet.</p>`
        : html`<div class="table-wrap">
            <table aria-label="Jobs">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>Charger</th>
                  <th>Kind</th>
                  <th>Status</th>
                  <th>Requested by</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                ${d.jobs.map(
                  (j) =>
                    html`<tr>
                      <td>
                        <button
                          type="button"
                          class="link"
                          onClick=${() => setShown(shown === j.jobId ? null : j.jobId)}
                        >
                          ${j.jobId}
                        </button>
                      </td>
                      <td>${j.chargerId}</td>
                      <td>${j.kind}</td>
                      <td>
                        <span class=${`state state-${j.finished ? 'settled' : 'charging'}`}
                          >${j.status}</span
                        >
                      </td>
                      <td>${j.requestedBy}</td>
                      <td>${time(j.updatedAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${
      shown === null
        ? null
        : html`<${JobHistory} jobId=${shown} canAct=${props.canAct} onDone=${data.reload} />`
    }
    <h2>Firmware files</h2>
    <${Files}
      files=${d.firmware}
      empty="No firmware uploaded yet."
      canAct=${props.canAct}
      onDone=${data.reload}
    />
    <h2>Logs from chargers</h2>
    <${Files}
      files=${d.logs}
      empty="No log received yet."
      canAct=${props.canAct}
      onDone=${data.reload}
    />
  `;
}

function Files(props: {
  files: TransferFile[];
  empty: string;
  canAct: boolean;
  onDone: () => void;
}) {
  if (props.files.length === 0) return html`<p class="muted">${props.empty}</p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th class="num">Size</th>
          <th>SHA-256</th>
          <th>From</th>
          <th>Received</th>
          ${props.canAct ? html`<th></th>` : null}
        </tr>
      </thead>
      <tbody>
        ${props.files.map(
          (f) =>
            html`<tr>
              <td>
                <a href=${`/admin/v1/files/${encodeURIComponent(f.fileId)}`} download=${f.name}
                  >${f.name}</a
                >${f.signed ? html` <span class="muted">signed</span>` : null}
              </td>
              <td class="num">${size(f.sizeBytes)}</td>
              <td><code title=${f.sha256}>${f.sha256.slice(0, 12)}…</code></td>
              <td>${f.chargerId ?? f.createdBy}</td>
              <td>${time(f.createdAt)}</td>
              ${
                props.canAct
                  ? html`<td>
                      <${ConfirmButton}
                        label="Delete"
                        danger=${true}
                        question=${`Delete ${f.name} and its bytes from the gateway? Refused while an unfinished job uses it.`}
                        run=${async () => {
                          await api.delete<TransferFile>(`/files/${encodeURIComponent(f.fileId)}`);
                          return `${f.name} deleted.`;
                        }}
                        after=${props.onDone}
                      />
                    </td>`
                  : null
              }
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function JobHistory(props: { jobId: number; canAct: boolean; onDone: () => void }) {
  const history = useData(
    () =>
      api.get<{
        job: TransferJob;
        history: { status: string; detail: string | null; at: string }[];
      }>(`/transfer-jobs/${props.jobId}`),
    String(props.jobId),
  );
  if (!history.data) return html`<${ErrorText} error=${history.error} />`;
  return html`<section aria-label=${`Job ${props.jobId}`}>
    <h3>Job ${props.jobId}: ${history.data.job.kind} on ${history.data.job.chargerId}</h3>
    ${
      props.canAct && !history.data.job.finished
        ? html`<${ConfirmButton}
            label="Cancel job"
            danger=${true}
            question=${`Cancel job ${props.jobId} on ${history.data.job.chargerId}? The gateway stops serving its URL (a download under way is cut) and the job ends Cancelled; the charger is sent nothing.`}
            run=${async () => {
              const a = await api.post<{ job: TransferJob }>(
                `/transfer-jobs/${props.jobId}/cancel`,
              );
              return `Job ${a.job.jobId}: ${a.job.status}.`;
            }}
            after=${() => {
              history.reload();
              props.onDone();
            }}
          />`
        : null
    }
    <ol class="history">
      ${history.data.history.map(
        (h) =>
          html`<li>
            ${time(h.at)} <strong>${h.status}</strong>${h.detail ? ` (${h.detail})` : ''}
          </li>`,
      )}
    </ol>
  </section>`;
}

function Actions(props: { data: Overview; onDone: () => void }) {
  const [charger, setCharger] = useState(props.data.chargers[0]?.chargerId ?? '');
  const [fileId, setFileId] = useState(props.data.firmware[0]?.fileId ?? '');
  const [upload, setUpload] = useState<File | null>(null);
  const [certificate, setCertificate] = useState<File | null>(null);
  const [signature, setSignature] = useState<File | null>(null);
  const done = (text: string) => {
    props.onDone();
    return text;
  };
  return html`
    <div class="actions">
      <label
        >Charger
        <select
          value=${charger}
          onChange=${(e: Event) => setCharger((e.target as HTMLSelectElement).value)}
        >
          ${props.data.chargers.map((c) => html`<option value=${c.chargerId}>${c.chargerId}</option>`)}
        </select>
      </label>
      <label
        >Firmware
        <select
          value=${fileId}
          onChange=${(e: Event) => setFileId((e.target as HTMLSelectElement).value)}
        >
          ${props.data.firmware.map((f) => html`<option value=${f.fileId}>${f.name}</option>`)}
        </select>
      </label>
      <${ConfirmButton}
        label="Update firmware"
        question=${`Send this firmware to ${charger}? It downloads, installs and reboots; a charger with an open session refuses.`}
        ready=${() => charger !== '' && fileId !== ''}
        run=${async () =>
          done(
            answerText(
              await api.post<JobAnswer>(
                `/chargers/${encodeURIComponent(charger)}/firmware-update`,
                {
                  fileId,
                },
              ),
            ),
          )}
      />
      <${ConfirmButton}
        label="Request log"
        question=${`Ask ${charger} to upload its diagnostics log to the gateway?`}
        ready=${() => charger !== ''}
        run=${async () =>
          done(
            answerText(
              await api.post<JobAnswer>(`/chargers/${encodeURIComponent(charger)}/log-request`),
            ),
          )}
      />
    </div>
    <div class="actions">
      <label
        >Upload a firmware file
        <input
          type="file"
          onChange=${(e: Event) => setUpload((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
      </label>
      <label
        >Signing certificate (PEM, signed firmware)
        <input
          type="file"
          onChange=${(e: Event) =>
            setCertificate((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
      </label>
      <label
        >Signature (signed firmware)
        <input
          type="file"
          onChange=${(e: Event) => setSignature((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
      </label>
      <${ConfirmButton}
        label="Upload"
        question=${`Upload ${upload?.name ?? 'the file'} to the gateway?`}
        ready=${() => upload !== null}
        run=${async () => {
          const file = upload as File;
          const query = new URLSearchParams({ name: file.name });
          if (certificate) query.set('signingCertificate', await certificate.text());
          if (signature) query.set('signature', await signatureText(signature));
          const stored = await api.upload<TransferFile>(`/firmware?${query.toString()}`, file);
          setFileId(stored.fileId);
          return done(
            `${stored.name} stored, ${size(stored.sizeBytes)}${stored.signed ? ', signed' : ''}.`,
          );
        }}
      />
    </div>
  `;
}
