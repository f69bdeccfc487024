import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Figure, Section } from './results.js';
import type { Spread } from './stats.js';

export interface Machine {
  date: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  commit: string;
  /** 1-minute load average when the run started: a busy machine shows here. */
  loadAtStart: number;
}

/** The commit measured: `git rev-parse --short HEAD`, "+dirty" when the tree differs from it. */
function describeCommit(): string {
  const git = (args: string[]) =>
    execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const head = git(['rev-parse', '--short', 'HEAD']);
    // Untracked files count: a new source file changes the build as much as an edit does.
    return git(['status', '--porcelain']) === '' ? head : `${head}+dirty`;
  } catch {
    // Not a git checkout (an unpacked release): the commit is simply unknown.
    return 'unknown';
  }
}

export function describeMachine(): Machine {
  const commit = describeCommit();
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit,
    loadAtStart: Number((loadavg()[0] ?? 0).toFixed(2)),
  };
}

/** Three significant figures, thousands grouped: enough for a ratio, honest about the noise. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: 0,
  });
}

/** `723 (690–760)`: the median of the rounds and their min–max; a single round is the value alone. */
export function formatSpread(value: number, spread?: Spread): string {
  if (!spread || spread.rounds < 2) return formatNumber(value);
  return `${formatNumber(value)} (${formatNumber(spread.low)}–${formatNumber(spread.high)})`;
}

function row(f: Figure): string {
  const ref = f.reference
    ? `${f.reference.label}: ${formatSpread(f.reference.value, f.reference.spread)}`
    : '';
  const ratio = f.ratio === undefined ? '' : `${formatNumber(f.ratio)}×`;
  const goal = f.target === undefined ? '' : `${f.target}: ${f.met ? 'met' : '**missed**'}`.trim();
  const rounds = f.spread && f.spread.rounds > 1 ? String(f.spread.rounds) : '';
  const cells = [
    f.name,
    `${formatSpread(f.gateway, f.spread)} ${f.unit}`,
    ref,
    ratio,
    rounds,
    goal,
  ];
  if (f.note) cells[0] = `${f.name} (${f.note})`;
  return `| ${cells.join(' | ')} |`;
}

/** Every goal of the run, met or missed, in one list under the machine line. */
function goals(sections: Section[]): string[] {
  const judged = sections.flatMap((s) => s.figures.filter((f) => f.target !== undefined));
  if (judged.length === 0) return [];
  const met = judged.filter((f) => f.met).length;
  return [
    `Goals: ${met} of ${judged.length} met` +
      (met < judged.length
        ? `; missed: ${judged
            .filter((f) => !f.met)
            .map((f) => `${f.name} (${formatNumber(f.gateway)} ${f.unit}, goal ${f.target})`)
            .join('; ')}.`
        : '.'),
    '',
  ];
}

export function markdown(machine: Machine, sections: Section[]): string {
  const lines = [
    `Measured ${machine.date.slice(0, 16).replace('T', ' ')} UTC on ${machine.cores} × ${machine.cpu}, ` +
      `${machine.memoryGiB} GiB, Node ${machine.node}, commit ${machine.commit}, ` +
      `load ${machine.loadAtStart} at start.`,
    '',
    'A figure with rounds is the median of that many rounds, its min–max in brackets; gateway and ' +
      'reference ran in alternating rounds, and the ratio is that of the two medians. Goals are ' +
      "judged on the medians (issue 30's, and the earlier issues' still standing).",
    '',
    ...goals(sections),
  ];
  for (const s of sections) {
    lines.push(`### ${s.title}`, '');
    lines.push('| Figure | Gateway | Reference (same run) | Ratio | Rounds | Goal |');
    lines.push('| --- | --- | --- | --- | --- | --- |');
    for (const f of s.figures) lines.push(row(f));
    lines.push('');
    for (const n of s.notes) lines.push(`- ${n}`);
    lines.push(`- Section took ${Math.round(s.seconds)} s.`, '');
  }
  return lines.join('\n');
}
