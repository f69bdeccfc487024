import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What test/docs.test.ts reads out of README.md and docs/*.md. */

export interface DocFile {
  /** Repository-relative path, e.g. docs/api.md. */
  path: string;
  text: string;
}

export interface FencedBlock {
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  /** Files named by a `<!-- checked-by: a b -->` comment right before the fence. */
  checkedBy: string[];
}

export interface Located {
  doc: string;
  line: number;
  text: string;
}

export const SHELL_LANGS = new Set(['sh', 'bash', 'console', 'shell']);

export function readDocs(root: string): DocFile[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((path) => ({
    path,
    text: readFileSync(join(root, path), 'utf8'),
  }));
}

const CHECKED_BY = /^<!--\s*checked-by:\s*(.+?)\s*-->$/;

/** Every fenced block, and the text outside them with each line's number kept. */
export function splitFences(doc: DocFile): { blocks: FencedBlock[]; prose: Located[] } {
  const lines = doc.text.split('\n');
  const blocks: FencedBlock[] = [];
  const prose: Located[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i] ?? '');
    if (!open) {
      prose.push({ doc: doc.path, line: i + 1, text: lines[i] ?? '' });
      continue;
    }
    const fence = open[2] ?? '```';
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').trim().startsWith(fence); i++) {
      body.push(lines[i] ?? '');
    }
    // The marker may be separated from the fence by blank lines only.
    let j = start - 1;
    while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
    const marker = CHECKED_BY.exec((lines[j] ?? '').trim());
    blocks.push({
      doc: doc.path,
      line: start + 1,
      lang: open[3] ?? '',
      body: body.join('\n'),
      checkedBy: marker?.[1]?.split(/\s+/) ?? [],
    });
  }
  return { blocks, prose };
}

/** Inline code spans of the prose (a span may run over a line break, as in Markdown). */
export function codeSpans(prose: Located[]): Located[] {
  const spans: Located[] = [];
  const text = prose.map((p) => p.text).join('\n');
  const lineAt = (offset: number) => prose[text.slice(0, offset).split('\n').length - 1];
  for (const m of text.matchAll(/(`+)([^`]+?)\1(?!`)/g)) {
    const at = lineAt(m.index);
    spans.push({
      doc: at?.doc ?? '',
      line: at?.line ?? 0,
      text: (m[2] ?? '').replace(/\s*\n\s*/g, ' ').trim(),
    });
  }
  return spans;
}

/** Link targets `[text](target)` of the prose, code spans taken out first. */
export function linkTargets(prose: Located[]): Located[] {
  const links: Located[] = [];
  for (const p of prose) {
    const visible = p.text.replace(/(`+)[^`]*?\1/g, '');
    for (const m of visible.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ doc: p.doc, line: p.line, text: m[1] ?? '' });
    }
  }
  return links;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -1 for repeats. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const plain = (heading[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** One simple command of a shell line: its leading VAR=value names and its words, unquoted. */
export interface SimpleCommand {
  env: string[];
  words: string[];
}

/**
 * The simple commands of a shell block: comments dropped, `\` continuations joined, split at
 * `&&`, `||`, `|`, `;` and command substitutions. For `console` blocks only `$ ` lines count.
 */
export function shellCommands(body: string, lang: string): SimpleCommand[] {
  let lines = body.replace(/\\\n/g, ' ').split('\n');
  if (lang === 'console') {
    lines = lines.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2));
  }
  return lines.flatMap((line) => splitLine(line));
}

/** A quote-aware split of one line into simple commands (enough for what docs show). */
export function splitLine(line: string): SimpleCommand[] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quote) {
      if (c === quote) quote = null;
      else word = (word ?? '') + c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      word = word ?? '';
    } else if (c === '#' && word === null) {
      break; // a comment
    } else if (/\s/.test(c)) {
      endWord();
    } else if (c === '$' && line[i + 1] === '(') {
      endCommand();
      i++;
    } else if (c === ')' || c === ';' || c === '|' || c === '&' || c === '`') {
      endCommand();
      if ((c === '|' || c === '&') && line[i + 1] === c) i++;
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand();
  return commands.map((ws) => {
    const env: string[] = [];
    while (ws.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(ws[0] ?? '')) {
      env.push((ws.shift() ?? '').split('=')[0] ?? '');
    }
    return { env, words: ws };
  });
}

/** The option names of a command (`--flag`, `-x`; `--flag=value` gives `--flag`). */
export function flagsOf(words: string[]): string[] {
  return words.filter((w) => /^--?[A-Za-z]/.test(w)).map((w) => w.split('=')[0] ?? w);
}

/**
 * Lines that cite a tracker's issue by number ("issue 30", "Issue #13"): a reader has no tracker,
 * so the docs name the thing itself. A link to another project's issue (`…/issues/243`) is a source,
 * not a citation, and is not matched.
 */
export function trackerReferences(doc: DocFile): Located[] {
  return doc.text
    .split('\n')
    .map((text, i) => ({ doc: doc.path, line: i + 1, text }))
    .filter((l) => /\bissue ?#?\d+/i.test(l.text));
}
