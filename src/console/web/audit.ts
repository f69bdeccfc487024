import { useState } from 'preact/hooks';
import { api, errorText } from './api';
import { time } from './format';
import type { AuditEntry, AuditPage } from './types';
import { ErrorText, html, Loading, useData } from './ui';

/** Parameters or a result in one line: `key: value`, nested values as JSON. */
export function summary(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '';
  return entries
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

/** The request as recorded ({params, query, body}) as one set of fields: the path's ids first. */
function requestFields(recorded: unknown): unknown {
  if (typeof recorded !== 'object' || recorded === null) return recorded;
  const { params, query, body } = recorded as Record<string, unknown>;
  const fields = (v: unknown) => (typeof v === 'object' && v !== null ? v : {});
  return { ...fields(params), ...fields(query), ...fields(body) };
}

/** The operator audit trail, newest first: who did what, when, with what, and what came of it. */
export function AuditView() {
  const list = useData(() => api.get<AuditPage>('/audit?limit=50'), '');
  const [more, setMore] = useState<{ entries: AuditEntry[]; next: string | null } | null>(null);
  const [moreError, setMoreError] = useState<string | null>(null);
  const entries = [...(list.data?.entries ?? []), ...(more?.entries ?? [])];
  const next = more ? more.next : (list.data?.nextCursor ?? null);
  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await api.get<AuditPage>(`/audit?limit=50&before=${encodeURIComponent(next)}`);
      setMore({ entries: [...(more?.entries ?? []), ...page.entries], next: page.nextCursor });
      setMoreError(null);
    } catch (e) {
      setMoreError(errorText(e));
    }
  };
  const refresh = () => {
    setMore(null);
    list.reload();
  };
  return html`
    <h1>Audit trail</h1>
    <p class="muted">
      Every operator action and export, as the gateway recorded it before answering. Secrets are
      never in it.
    </p>
    <button type="button" onClick=${refresh}>Refresh</button>
    <${ErrorText} error=${list.error} />
    ${
      list.data === null && !list.error
        ? html`<${Loading} what="the audit trail" />`
        : html`
            <div class="table-wrap">
              <table data-table="audit">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Operator</th>
                    <th>Action</th>
                    <th>With</th>
                    <th class="num">Answer</th>
                    <th>Outcome</th>
                  </tr>
                </thead>
                <tbody>
                  ${entries.map(
                    (e) =>
                      html`<tr data-seq=${e.seq} data-action=${e.action}>
                        <td>${time(e.at)}</td>
                        <td title=${e.operatorId}>${e.operatorName}</td>
                        <td class="mono">${e.action}</td>
                        <td>${summary(requestFields(e.params))}</td>
                        <td class=${`num ${e.status >= 400 ? 'neg' : ''}`}>${e.status}</td>
                        <td>${summary(e.result)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${entries.length === 0 ? html`<p class="muted">No action recorded yet.</p>` : null}
            <${ErrorText} error=${moreError} />
            ${next ? html`<button type="button" onClick=${loadMore}>Show more</button>` : null}
          `
    }
  `;
}
