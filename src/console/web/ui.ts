import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';

export { html };

// Client-side routes live under /console (the gateway answers index.html for all of them).
const listeners = new Set<() => void>();
export function navigate(to: string): void {
  history.pushState(null, '', to);
  for (const l of listeners) l();
}
addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, tick] = useState(0);
  useEffect(() => {
    const l = () => tick((n) => n + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function Link(props: { href: string; class?: string; children: ComponentChildren }) {
  const click = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return html`<a href=${props.href} class=${props.class} onClick=${click}>${props.children}</a>`;
}

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload: () => void;
  /** Changes what is shown now (a pushed figure), until the next load. */
  patch: (fn: (d: T) => T) => void;
}

/** Loads `fn` when `key` changes; `reload` fetches again without blanking what is shown. */
export function useData<T>(fn: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const seq = useRef(0);
  const reload = useCallback(() => {
    const mine = ++seq.current;
    fnRef.current().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(null);
      },
      (e: unknown) => {
        if (mine === seq.current) setError(errorText(e));
      },
    );
  }, []);
  useEffect(() => {
    setData(null);
    reload();
  }, [key]);
  const patch = useCallback((fn: (d: T) => T) => setData((d) => (d === null ? d : fn(d))), []);
  return { data, error, reload, patch };
}

export function ErrorText(props: { error: string | null }) {
  return props.error ? html`<p class="error" role="alert">${props.error}</p>` : null;
}

export function Loading(props: { what: string }) {
  return html`<p class="muted" aria-busy="true">Loading ${props.what}…</p>`;
}

/**
 * A button that asks before it acts, then shows the outcome (the charger's reply or the error).
 * The dialog is the browser's own <dialog>: focus moves into it and Escape cancels.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  danger?: boolean;
  /** Checked before the dialog opens (a form's own validation): false keeps it closed. */
  ready?: () => boolean;
  run: () => Promise<string>;
  /**
   * Called once the outcome's dialog is closed: a reload here, not in `run`, so the outcome is
   * read before the list changes (a deleted row would take its dialog with it).
   */
  after?: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const confirm = async () => {
    setBusy(true);
    try {
      setOutcome({ ok: true, text: await props.run() });
    } catch (e) {
      setOutcome({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
    }
  };
  const close = () => {
    dialog.current?.close();
    if (outcome) props.after?.();
    setOutcome(null);
  };
  return html`
    <button
      type="button"
      class=${props.danger ? 'danger' : ''}
      onClick=${() => {
        if (props.ready?.() !== false) dialog.current?.showModal();
      }}
    >
      ${props.label}
    </button>
    <dialog ref=${dialog} onClose=${() => setOutcome(null)} aria-label=${props.label}>
      <p class="question">${props.question}</p>
      ${
        outcome
          ? html`<p class=${outcome.ok ? 'reply' : 'error'} role="status">${outcome.text}</p>
              <div class="buttons"><button type="button" onClick=${close}>Close</button></div>`
          : html`<div class="buttons">
              <button type="button" onClick=${close} disabled=${busy}>Cancel</button>
              <button
                type="button"
                class=${props.danger ? 'danger' : 'primary'}
                onClick=${confirm}
                disabled=${busy}
              >
                ${busy ? 'Sending…' : `Yes, ${props.label.toLowerCase()}`}
              </button>
            </div>`
      }
    </dialog>
  `;
}
