/**
 * The derived-state timeline of one machine over a range: the state in force
 * at the range start, every State row inside it, and the stretches when the
 * gateway itself was down (no heartbeat for more than two heartbeat periods),
 * which count as noData whatever the last recorded state was.
 */
import type { DerivedStateName } from '../../../core/roles/gateway/fleet/derive-state.js';
import type { HeartbeatEvidence, MachineHistory, TimeSpan } from './model.js';

/** A stretch of one state; `gap` marks time the gateway was down. */
export interface Segment {
  startMs: number;
  endMs: number;
  state: DerivedStateName;
  gap: boolean;
}

/**
 * Stretches of more than `maxGapMs` between consecutive heartbeats, clipped
 * to `range`. The evidence runs from the last heartbeat before the range to
 * the first one after it, or to `nowMs` when none follows (silence up to now
 * is a gap too). Before the first stored heartbeat nothing is judged:
 * retention may have removed the older ones.
 */
export function gatewayGaps(heartbeats: HeartbeatEvidence, range: TimeSpan, nowMs: number, maxGapMs: number): Gap[] {
  const gaps: Gap[] = [];
  let previous = heartbeats.before;
  const consider = (next: number): void => {
    if (previous !== null && next - previous > maxGapMs) {
      const startMs = Math.max(previous, range.startMs);
      const endMs = Math.min(next, range.endMs);
      if (endMs > startMs) gaps.push({ startMs, endMs, silentFromMs: previous });
    }
    previous = next;
  };
  for (const ts of heartbeats.within) consider(ts);
  consider(heartbeats.after ?? nowMs);
  return gaps;
}

/** A gateway gap clipped to a range, and the last heartbeat before it (which may lie before the range). */
export interface Gap extends TimeSpan {
  silentFromMs: number;
}

/** Receives one stretch of the timeline. */
export type SegmentVisitor = (startMs: number, endMs: number, state: DerivedStateName, gap: boolean) => void;

/**
 * Walks the state timeline over `range`, covering it without holes, in time
 * order. Before the first known state the machine is noData. Inside a gateway
 * gap every state but inactive becomes noData (an inactive machine has no
 * actor and writes no heartbeats, so its silence is expected). Adjacent equal
 * stretches are merged. Nothing is allocated per stretch: 30 days hold about
 * 86,000 of them.
 */
export function forEachSegment(
  history: Pick<MachineHistory, 'stateBefore' | 'states'>,
  range: TimeSpan,
  gaps: readonly TimeSpan[],
  visit: SegmentVisitor,
): void {
  const { states } = history;
  let state: DerivedStateName = history.stateBefore ?? 'noData';
  let i = 0;
  let g = 0;
  let t = range.startMs;
  // The stretch being built; emitted when the next one differs.
  let openStart = t;
  let openState: DerivedStateName | null = null;
  let openGap = false;
  while (i < states.length && states[i]!.ts <= t) state = states[i++]!.state;
  while (t < range.endMs) {
    while (g < gaps.length && gaps[g]!.endMs <= t) g++;
    const gap = gaps[g];
    const inGap = gap !== undefined && gap.startMs <= t;
    const nextGapEdge = gap === undefined ? range.endMs : inGap ? gap.endMs : gap.startMs;
    const nextState = i < states.length ? states[i]!.ts : range.endMs;
    const next = Math.min(nextGapEdge, nextState, range.endMs);
    const hidden = inGap && state !== 'inactive';
    const shown: DerivedStateName = hidden ? 'noData' : state;
    if (openState !== shown || openGap !== hidden) {
      if (openState !== null) visit(openStart, t, openState, openGap);
      openStart = t;
      openState = shown;
      openGap = hidden;
    }
    t = next;
    while (i < states.length && states[i]!.ts <= t) state = states[i++]!.state;
  }
  if (openState !== null) visit(openStart, t, openState, openGap);
}

/** The timeline over `range` as a list of stretches (see forEachSegment). */
export function stateSegments(
  history: Pick<MachineHistory, 'stateBefore' | 'states'>,
  range: TimeSpan,
  gaps: readonly TimeSpan[],
): Segment[] {
  const segments: Segment[] = [];
  forEachSegment(history, range, gaps, (startMs, endMs, state, gap) => segments.push({ startMs, endMs, state, gap }));
  return segments;
}
