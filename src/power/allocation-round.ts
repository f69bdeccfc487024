import { allocate } from './allocator.js';
import { connectorKey, type LoadManagerOptions, type ManagedConnector } from './power-model.js';
import type { PowerState } from './power-state.js';
import type { ProfileSender } from './profile-sender.js';

/** One reallocation; true when something was not delivered and a later round should retry. */
export async function allocationRound(
  state: PowerState,
  sender: ProfileSender,
  o: LoadManagerOptions,
  reason: string,
): Promise<boolean> {
  const connectors = state.connectorMap();
  const active = o.active().filter((s) => connectors.has(connectorKey(s.chargerId, s.connectorId)));
  const inputs = state.inputs(connectors, active);
  const limits = state.limitMap();
  const allocation = allocate(state.limitsLeft(connectors, active), inputs, o.policy);
  state.allocation = allocation;
  for (const id of [...state.confirmed.keys()]) {
    if (!allocation.has(id)) state.confirmed.delete(id);
  }
  for (const map of [state.drawCap, state.underDraw, state.drawing]) {
    for (const id of [...map.keys()]) if (!allocation.has(id)) map.delete(id);
  }
  for (const set of [
    state.overDraw,
    state.unsure,
    state.firstPast,
    state.firstWithin,
    state.unheard,
  ]) {
    for (const id of [...set]) if (!allocation.has(id)) set.delete(id);
  }
  state.allowances.retain((id) => allocation.has(id));

  const left = state.limitsLeft(connectors, active);
  /** What a node's limit leaves one session beside every other session's allocation. */
  const roomOn = (node: string, sessionId: string): number =>
    active.reduce(
      (room, x) => {
        const a = allocation.get(x.sessionId);
        const on = connectors.get(connectorKey(x.chargerId, x.connectorId))?.path.includes(node);
        return x.sessionId === sessionId || !on || typeof a !== 'number' ? room : room - a;
      },
      left.get(node) ?? 0,
    );

  const changes = active.flatMap((s) => {
    const a = allocation.get(s.sessionId);
    if (a === undefined) return [];
    const c = connectors.get(connectorKey(s.chargerId, s.connectorId)) as ManagedConnector;
    const target = a === 'waiting' ? 0 : a;
    const current = state.currentAllowance(s, c);
    if (state.confirmed.get(s.sessionId) === target && !state.unsure.has(s.sessionId)) return [];
    // An offline charger keeps counting at what it was last allowed; it gets the new value
    // when it is back (chargerUp).
    if (!o.chargers.isOnline(s.chargerId)) return [];
    // One drawing past the profile it accepted keeps it (it may yet obey it); one whose charger
    // rebooted gets its TxProfile once the charger shows it still runs the transaction.
    if (state.unheard.has(s.sessionId)) return [];
    if (state.refusing.has(s.chargerId)) {
      // Counted at its maximum, but a profile it accepted before (a 0 W wait, before it was
      // found drawing past one) would still hold it there: lifted, once, when it fits.
      const held = state.confirmed.get(s.sessionId);
      if (held === undefined || held >= target) return [];
      return [{ s, c, target, current: held, lift: true }];
    }
    if (state.drawing.has(s.sessionId)) {
      // Counted at its reading, it is never raised; its profile only comes down to what the
      // others' allocations leave it, so that once it obeys it holds no more than its room.
      const held = state.confirmed.get(s.sessionId);
      const room = Math.max(0, Math.min(...c.path.map((node) => roomOn(node, s.sessionId))));
      if (held === undefined || room >= held) return [];
      return [{ s, c, target: room, current: held, lift: false }];
    }
    return [{ s, c, target, current, lift: false }];
  });
  const lowers = changes.filter((x) => x.target <= x.current);
  const raises = changes.filter((x) => x.target > x.current);
  // The idle connectors' defaults follow what the sessions leave (a session starting there
  // draws its default until its own round): lowered with the lowers, raised with the raises.
  const defaultTargets = state.defaultTargets(connectors, active, (s) => {
    const a = allocation.get(s.sessionId);
    return typeof a === 'number' ? a : 0;
  });
  const defaultChanges = [...defaultTargets].flatMap(([k, target]) => {
    const c = connectors.get(k) as ManagedConnector;
    const current = state.defaults.get(k);
    if (current === target || !o.chargers.isOnline(c.chargerId)) return [];
    return [{ c, target, current: current ?? c.maxW }];
  });
  const defaultLowers = defaultChanges.filter((x) => x.target < x.current);
  const defaultRaises = defaultChanges.filter((x) => x.target > x.current);
  o.log.info(
    {
      reason,
      sessions: active.length,
      lowers: lowers.length,
      raises: raises.length,
      defaultLowers: defaultLowers.length,
      defaultRaises: defaultRaises.length,
    },
    'power reallocated',
  );

  const lowered = await Promise.all([
    ...lowers.map((x) => sender.send(x.s, x.c, x.target)),
    ...defaultLowers.map((x) => sender.sendDefault(x.c, x.target)),
  ]);
  let retry = lowered.some((ok) => !ok);

  // A raise goes out only when every node it sits on stays within its limit with what the
  // others are allowed now (a lower that failed still counts at its old, higher value), the
  // idle connectors' defaults included.
  const fits = (c: ManagedConnector, watts: number): boolean =>
    c.path.every(
      (node) =>
        state.exposure(node, connectors, active, connectorKey(c.chargerId, c.connectorId)) +
          watts <=
        (limits.get(node) ?? 0),
    );
  for (const x of raises) {
    if (x.lift) {
      if (fits(x.c, x.target)) await sender.lift(x.s, x.c, x.target);
    } else if (!fits(x.c, x.target)) retry = true;
    else if (!(await sender.send(x.s, x.c, x.target))) retry = true;
  }
  for (const x of defaultRaises) {
    if (!fits(x.c, x.target)) retry = true;
    else if (!(await sender.sendDefault(x.c, x.target))) retry = true;
  }
  return retry;
}
