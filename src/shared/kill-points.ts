/**
 * Named kill points for crash tests. Inert unless the environment variable FLEETGW_KILL_AT names
 * one (`point`, or `point@N` for its Nth passage): then the process SIGKILLs itself right there, with
 * no cleanup and no flush, as a power cut or the OOM killer would. A name that is not in the list
 * stops the gateway at start-up (a typo must not make a crash test pass by never crashing).
 */
export const KILL_POINTS = [
  // Start (POST /v1/sessions)
  'start.before_debit',
  'start.debit_uncommitted',
  'start.debit_committed',
  'start.remote_start_sent',
  'start.remote_start_answered',
  'start.before_response',
  // Full refund (remote start refused, unanswered, or no EV in time)
  'refund.uncommitted',
  'refund.committed',
  // Settlement (the charger's stop message)
  'settle.before_commit',
  'settle.uncommitted',
  'settle.committed',
] as const;

export type KillPoint = (typeof KILL_POINTS)[number];

interface Armed {
  point: KillPoint;
  passesLeft: number;
}

function parse(spec: string | undefined): Armed | undefined {
  if (spec === undefined || spec === '') return undefined;
  const [name = '', nth = '1'] = spec.split('@');
  const point = KILL_POINTS.find((p) => p === name);
  const passes = Number(nth);
  if (!point || !Number.isInteger(passes) || passes < 1) {
    throw new Error(
      `FLEETGW_KILL_AT=${spec}: not one of ${KILL_POINTS.join(', ')} (optionally @N)`,
    );
  }
  return { point, passesLeft: passes };
}

const armed = parse(process.env.FLEETGW_KILL_AT);

/** The armed point, for the start-up log line; undefined in normal operation. */
export function armedKillPoint(): string | undefined {
  return process.env.FLEETGW_KILL_AT || undefined;
}

/** True when `point` is the armed one (lets a caller do extra work only for a crash test). */
export function isArmed(point: KillPoint): boolean {
  return armed?.point === point;
}

/** Dies here if this is the armed point's Nth passage; otherwise does nothing. */
export function killPoint(point: KillPoint): void {
  if (armed?.point !== point || --armed.passesLeft > 0) return;
  // Synchronous on a pipe or file: the test sees where the process died.
  process.stderr.write(`${JSON.stringify({ msg: 'kill point reached', point })}\n`);
  process.kill(process.pid, 'SIGKILL');
}
