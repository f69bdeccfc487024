import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Figure, Section } from './results.js';

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

export function describeMachine(): Machine {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // Not a git checkout (an unpacked release): the commit is simply unknown.
  }
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

function row(f: Figure): string {
  const ref = f.reference ? `${formatNumber(f.reference.value)} (${f.reference.label})` : '';
  const ratio = f.ratio === undefined ? '' : `${formatNumber(f.ratio)}×`;
  const target = f.target ?? '';
  const met = f.met === undefined ? '' : f.met ? 'met' : '**missed**';
  const cells = [f.name, `${formatNumber(f.gateway)} ${f.unit}`, ref, ratio, target, met];
  if (f.note) cells[0] = `${f.name} (${f.note})`;
  return `| ${cells.join(' | ')} |`;
}

export function markdown(machine: Machine, sections: Section[]): string {
  const lines = [
    `Measured ${machine.date.slice(0, 10)} on ${machine.cores} × ${machine.cpu}, ` +
      `${machine.memoryGiB} GiB, Node ${machine.node}, commit ${machine.commit}, ` +
      `load ${machine.loadAtStart} at start.`,
    '',
  ];
  for (const s of sections) {
    lines.push(`### ${s.title}`, '');
    lines.push('| Figure | Gateway | Reference (same run) | Ratio | Target | |');
    lines.push('| --- | --- | --- | --- | --- | --- |');
    for (const f of s.figures) lines.push(row(f));
    lines.push('');
    for (const n of s.notes) lines.push(`- ${n}`);
    lines.push(`- Section took ${Math.round(s.seconds)} s.`, '');
  }
  return lines.join('\n');
}
