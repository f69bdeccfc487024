import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeMachine, markdown } from './lib/report.js';
import type { BenchContext, BenchSection, Section } from './lib/results.js';
import { SECTIONS } from './sections.js';

/**
 * `npm run bench`: every section in order, each against its bare references in the same run,
 * then the Markdown table and JSON written to bench-results/ (and the table printed).
 *   --only ocpp,start   run only these sections (keys in sections.ts)
 *   BENCH_SCALE=0.2     shorter measuring windows, for a smoke run
 */
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    out: { type: 'string', default: 'bench-results' },
  },
});

const scale = Number(process.env.BENCH_SCALE ?? 1);
if (!(scale > 0))
  throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
const wanted = values.only?.split(',').map((s) => s.trim());
const unknown = wanted?.filter((k) => !SECTIONS.some((s) => s.key === k)) ?? [];
if (unknown.length > 0)
  throw new Error(
    `unknown section(s) ${unknown.join(', ')}; known: ${SECTIONS.map((s) => s.key).join(', ')}`,
  );
const chosen: BenchSection[] = SECTIONS.filter((s) => !wanted || wanted.includes(s.key));

const machine = describeMachine();
const outDir = resolve(values.out ?? 'bench-results');
mkdirSync(outDir, { recursive: true });
const results: Section[] = [];
const started = process.hrtime.bigint();

for (const section of chosen) {
  const dirs: string[] = [];
  const ctx: BenchContext = {
    scale,
    window: (seconds) => Math.max(1, Math.round(seconds * scale)),
    rounds: (full) => Math.max(scale >= 1 ? 3 : 1, Math.round(full * scale)),
    tempDir: () => {
      const dir = mkdtempSync(join(tmpdir(), `fleetgw-bench-${section.key}-`));
      dirs.push(dir);
      return dir;
    },
    log: (message) => console.error(`[bench ${section.key}] ${message}`),
  };
  ctx.log(`${section.title}…`);
  const t0 = process.hrtime.bigint();
  try {
    const measured = await section.run(ctx);
    results.push({
      key: section.key,
      title: section.title,
      ...measured,
      seconds: Number(process.hrtime.bigint() - t0) / 1e9,
    });
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  // Written after every section, so a run cut short still leaves what it measured.
  write();
}

function write(): void {
  const table = markdown(machine, results);
  writeFileSync(join(outDir, 'results.md'), table);
  writeFileSync(
    join(outDir, 'results.json'),
    JSON.stringify(
      { machine, totalSeconds: Number(process.hrtime.bigint() - started) / 1e9, sections: results },
      null,
      2,
    ) + '\n',
  );
}

write();
console.log(markdown(machine, results));
console.error(
  `[bench] ${results.length} section(s) in ${Math.round(Number(process.hrtime.bigint() - started) / 1e9)} s; ` +
    `written to ${join(outDir, 'results.md')} and results.json`,
);
