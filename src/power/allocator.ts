/**
 * The site's allocation policy as a pure function: node limits and active sessions in, each
 * session's power (or 'waiting') out. docs/load-management.md "Allocation policy" states the rules;
 * test/load-allocator.test.ts holds them as properties.
 */

export type AllocationPolicy = 'equal' | 'owed-weighted';

export interface AllocationSession {
  sessionId: string;
  /** Node ids from the site down to the circuit the connector is wired to ('site' alone when none). */
  path: readonly string[];
  /** Whole watts. */
  minW: number;
  maxW: number;
  /** Energy still owed to the driver (paid, not yet delivered): the owed-weighted policy's weight. */
  owedWh: number;
  /** False for a charger that refused a profile: it is counted at its maximum. */
  acceptsProfiles: boolean;
  /** When it started (any increasing number): the most recently started wait first. */
  startOrder: number;
}

export type Allocation = number | 'waiting';

/**
 * Each session's allowance, whole W, or 'waiting' when its minimum does not fit.
 *
 * 1. A session whose charger refuses profiles is counted at its maximum on every node above it.
 * 2. The others are admitted in start order (then session id): one is admitted when its minimum
 *    fits on every node of its path next to the minimums already admitted; one that does not fit
 *    waits, and the node where it did not fit takes no later session (a later, smaller session
 *    never overtakes a waiting one there).
 * 3. The admitted share what is left by water-filling from their minimums: equal shares (or in
 *    proportion to the energy owed), a session held by its maximum or by a full circuit leaves
 *    the rest to the others. Shares are rounded down, so every node's sum stays within its limit.
 */
export function allocate(
  limits: ReadonlyMap<string, number>,
  sessions: readonly AllocationSession[],
  policy: AllocationPolicy = 'equal',
): Map<string, Allocation> {
  const result = new Map<string, Allocation>();
  const capacity = new Map(limits);
  const take = (path: readonly string[], watts: number): void => {
    for (const node of path) capacity.set(node, nodeCapacity(capacity, node) - watts);
  };

  for (const s of sessions) {
    if (s.acceptsProfiles) continue;
    result.set(s.sessionId, s.maxW);
    take(s.path, s.maxW);
  }

  const ordered = sessions
    .filter((s) => s.acceptsProfiles)
    .sort((a, b) =>
      a.startOrder !== b.startOrder
        ? a.startOrder - b.startOrder
        : a.sessionId < b.sessionId
          ? -1
          : a.sessionId > b.sessionId
            ? 1
            : 0,
    );
  const closed = new Set<string>();
  const minimums = new Map<string, number>();
  const admitted: AllocationSession[] = [];
  for (const s of ordered) {
    const floor = Math.min(s.minW, s.maxW);
    const full = s.path.filter(
      (node) => (minimums.get(node) ?? 0) + floor > nodeCapacity(capacity, node),
    );
    if (full.length > 0 || s.path.some((node) => closed.has(node))) {
      result.set(s.sessionId, 'waiting');
      for (const node of full) closed.add(node);
      continue;
    }
    for (const node of s.path) minimums.set(node, (minimums.get(node) ?? 0) + floor);
    admitted.push(s);
  }

  const shares = waterFill(capacity, admitted, policy);
  // The search stops a hair below the exact level: a millionth of a watt back keeps 9999.9999999
  // from becoming 9999 without ever adding a whole watt to a node's sum.
  for (const s of admitted) {
    result.set(s.sessionId, Math.min(s.maxW, Math.floor((shares.get(s.sessionId) ?? 0) + 1e-6)));
  }
  return result;
}

function nodeCapacity(capacity: ReadonlyMap<string, number>, node: string): number {
  const watts = capacity.get(node);
  if (watts === undefined) throw new Error(`no limit for power node ${node}`);
  return watts;
}

/**
 * Progressive filling: every unfrozen session's share is clamp(weight × level, min, max); the
 * level rises until a node is full (its sessions freeze there) or every session is at its max.
 */
function waterFill(
  capacity: ReadonlyMap<string, number>,
  sessions: readonly AllocationSession[],
  policy: AllocationPolicy,
): Map<string, number> {
  const weight = (s: AllocationSession): number =>
    policy === 'owed-weighted' ? Math.max(s.owedWh, 1) : 1;
  const floor = (s: AllocationSession): number => Math.min(s.minW, s.maxW);
  const share = new Map<string, number>(sessions.map((s) => [s.sessionId, floor(s)]));
  const frozen = new Set<string>();
  const nodes = [...new Set(sessions.flatMap((s) => s.path))];
  const members = new Map(nodes.map((n) => [n, sessions.filter((s) => s.path.includes(n))]));
  const at = (s: AllocationSession, level: number): number =>
    frozen.has(s.sessionId)
      ? (share.get(s.sessionId) ?? 0)
      : Math.min(s.maxW, Math.max(floor(s), weight(s) * level));
  const fits = (level: number): boolean =>
    nodes.every(
      (n) =>
        (members.get(n) ?? []).reduce((sum, s) => sum + at(s, level), 0) <=
        nodeCapacity(capacity, n),
    );

  while (frozen.size < sessions.length) {
    const active = sessions.filter((s) => !frozen.has(s.sessionId));
    let low = 0;
    let high = Math.max(...active.map((s) => s.maxW / weight(s)));
    if (fits(high)) {
      for (const s of active) share.set(s.sessionId, s.maxW);
      break;
    }
    // To the last bit of a double: a level off by 1e-9 is a whole watt at a weight of 1e9 Wh owed.
    for (let i = 0; i < 2000; i++) {
      const mid = (low + high) / 2;
      if (mid <= low || mid >= high) break;
      if (fits(mid)) low = mid;
      else high = mid;
    }
    for (const s of active) share.set(s.sessionId, at(s, low));
    // Freeze the sessions at their max and those on the fullest node (the one that stopped the level).
    let tightest: string | undefined;
    let leastSlack = Infinity;
    for (const n of nodes) {
      const open = (members.get(n) ?? []).filter(
        (s) => !frozen.has(s.sessionId) && (share.get(s.sessionId) ?? 0) < s.maxW,
      );
      if (open.length === 0) continue;
      const used = (members.get(n) ?? []).reduce(
        (sum, s) => sum + (share.get(s.sessionId) ?? 0),
        0,
      );
      const slack = nodeCapacity(capacity, n) - used;
      if (slack < leastSlack) {
        leastSlack = slack;
        tightest = n;
      }
    }
    for (const s of active) {
      const full =
        tightest !== undefined && s.path.includes(tightest)
          ? true
          : (share.get(s.sessionId) ?? 0) >= s.maxW;
      if (full) frozen.add(s.sessionId);
    }
    if (tightest === undefined) break;
  }
  return share;
}
