/**
 * The agent's state at the head of the history: every machine's replay fed
 * each committed row, in sequence order and only up to the writer's
 * `committedThrough` (a flush retried after a later one commits out of
 * order; its rows wait here for the gap to close). `through` is the last
 * history seq applied: /current answers as of it, and /sample reads up to it,
 * so a client going from /current to /sample?from=nextSequence neither
 * misses nor repeats an observation. Streams wait on `onObservations`.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { GatewayReader } from './gateway-reader.js';
import { lastObservationsAt, parseRow } from './machine-state.js';
import { MachineReplay, type Observation } from './replay.js';

type ObservationListener = (observations: readonly Observation[]) => void;

export class LiveState {
  private readonly replays = new Map<string, MachineReplay>();
  /** Committed rows not yet applied, in sequence order. */
  private pending: SequencedRow[] = [];
  private readonly listeners = new Set<ObservationListener>();
  private unsubscribe: (() => void) | undefined;
  private ready = false;
  /** The last history seq applied. */
  through = 0;
  /** Changes whenever a machine's motion items (its Motion rows' families) change, and with them the device model. */
  layoutRevision = 0;

  private constructor(private readonly reader: GatewayReader) {}

  /** Rebuilds every machine's state from the history and follows the commits from then on. */
  static async open(reader: GatewayReader): Promise<LiveState> {
    const live = new LiveState(reader);
    live.unsubscribe = reader.onCommit((rows, committedThrough) => live.committed(rows, committedThrough));
    const through = reader.committedThrough();
    const ids = reader.machines().map((m) => m.machineID);
    const replays = await lastObservationsAt(reader, ids, through + 1);
    for (const [id, replay] of replays) live.replays.set(id, replay);
    live.through = through;
    // Rows committed before the subscription but after `through` (a flush that overtook a retried one) come from the table.
    const now = reader.committedThrough();
    const missed = now > through ? await reader.rowsAfter(through, now, 1_000_000) : [];
    const seen = new Set(live.pending.map((r) => r.seq));
    live.pending = [...live.pending.filter((r) => r.seq > through), ...missed.filter((r) => !seen.has(r.seq))].sort((a, b) => a.seq - b.seq);
    live.ready = true;
    live.applyCommitted(reader.committedThrough());
    return live;
  }

  /** The machine's replay at the head (a fresh one for a machine without rows yet). */
  replay(machineID: string): MachineReplay {
    let replay = this.replays.get(machineID);
    if (!replay) {
      replay = new MachineReplay(machineID);
      this.replays.set(machineID, replay);
    }
    return replay;
  }

  /** Calls `listener` with the observations of each batch of rows applied; answers the way to stop. */
  onObservations(listener: ObservationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private committed(rows: readonly SequencedRow[], committedThrough: number): void {
    const first = rows[0];
    const last = this.pending[this.pending.length - 1];
    if (first && last && first.seq < last.seq) {
      this.pending = [...this.pending, ...rows].sort((a, b) => a.seq - b.seq);
    } else {
      for (const row of rows) this.pending.push(row);
    }
    if (this.ready) this.applyCommitted(committedThrough);
  }

  private applyCommitted(committedThrough: number): void {
    let n = 0;
    const emitted: Observation[] = [];
    const emit = (o: Observation) => emitted.push(o);
    while (n < this.pending.length && this.pending[n]!.seq <= committedThrough) {
      const row = this.pending[n++]!;
      if (row.seq <= this.through) continue;
      const replay = this.replay(row.machineID);
      const layout = row.cls === 'Motion' ? replay.motion.layoutKey() : undefined;
      replay.apply(parseRow(row), emit);
      if (layout !== undefined && layout !== replay.motion.layoutKey()) this.layoutRevision++;
    }
    if (n > 0) this.pending = this.pending.slice(n);
    // Rows dropped from a full buffer never come: committedThrough covers them.
    if (committedThrough > this.through) this.through = committedThrough;
    if (emitted.length === 0 && n === 0) return;
    for (const listener of this.listeners) listener(emitted);
  }

  /** Stops following the commits. */
  close(): void {
    this.unsubscribe?.();
    this.listeners.clear();
  }
}
