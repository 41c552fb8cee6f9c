/**
 * The fleet's rows: per machine, the answers its fleet interfaces give, kept
 * ready and published where they change instead of being worked out again by
 * every reader.
 *
 *  - The status row is the machine's batchReadTaskData?type=CNCStatus entry,
 *    and the health row its batchReadErrors entry. Each is a frozen object
 *    reused until the machine changes.
 *  - Where a machine changes (a sample or error stored, a connection step,
 *    a config applied; fleet.ts and machine-actions.ts), it is published:
 *    that only bumps the fleet revision and marks the row, so a fleet sampled
 *    at any rate costs O(1) per sample. A row is rebuilt on its first read
 *    after a change.
 *  - Time alone changes a status row too (a sample turns stale, a reason
 *    names the status's age): each row knows until when it holds
 *    (`validUntil`), and a read after that re-derives it, and counts it as a
 *    change when it differs.
 *  - Every change has a revision, so a reader asks only for what changed
 *    since the revision it holds (`changedSince`). A removed machine leaves
 *    a tombstone; the last MAX_TOMBSTONES are kept, and a reader whose
 *    revision is older than what they cover gets everything (`full`).
 *    Revisions start from the clock at start-up (in thousandths of a
 *    millisecond), so a revision from an earlier run of the gateway is
 *    older than any of this run and gets everything too.
 */
import type { HealthEntry, StatusEntry } from '../api-outputs.js';
import { healthEntry, statusEntry } from './entries.js';
import type { MachineSnapshot } from './machine-snapshot.js';
import type { PublishKind } from './machine-actions.js';

/** Removed machines remembered for readers asking what changed. */
export const MAX_TOMBSTONES = 1000;

/** One machine's ready rows. */
export interface MachineRows {
  readonly machineID: string;
  /** The fleet revision of the status row's last change. */
  readonly statusRevision: number;
  /** The fleet revision of the health row's last change. */
  readonly healthRevision: number;
  /** The batchReadTaskData CNCStatus entry. */
  readonly status: StatusEntry;
  /** The batchReadErrors entry. */
  readonly health: HealthEntry;
  /** Until when (unix ms, exclusive) time alone leaves the status row as it is. */
  readonly validUntil: number;
}

/** What changed after a revision. */
export interface RowChanges {
  revision: number;
  /** The revision asked about is too old (or from an earlier run): `rows` holds every machine asked for. */
  full: boolean;
  rows: MachineRows[];
  removed: string[];
}

/** Gives a machine's snapshot at a time. */
export type SnapshotSource = (machineID: string, now: number) => MachineSnapshot;

const STATUS = 1;
const HEALTH = 2;
const BITS: Record<PublishKind, number> = { status: STATUS, health: HEALTH, both: STATUS | HEALTH };

class Rows implements MachineRows {
  statusRevision: number;
  healthRevision: number;
  validUntil = -Infinity;
  /** Which rows a publish has made out of date. */
  dirty = STATUS | HEALTH;
  private statusRow: StatusEntry | undefined;
  private healthRow: HealthEntry | undefined;

  constructor(
    readonly machineID: string,
    private readonly owner: FleetRows,
    revision: number,
  ) {
    this.statusRevision = revision;
    this.healthRevision = revision;
  }

  // Read through FleetRows.get, which refreshes the rows first.
  get status(): StatusEntry {
    return this.statusRow as StatusEntry;
  }

  get health(): HealthEntry {
    return this.healthRow as HealthEntry;
  }

  /** Rebuilds what a publish or time has made out of date. */
  refresh(now: number): void {
    const statusDue = (this.dirty & STATUS) !== 0 || now >= this.validUntil;
    if (!statusDue && (this.dirty & HEALTH) === 0) return;
    const view = this.owner.source(this.machineID, now);
    if (statusDue) {
      const next = statusEntry(view);
      this.validUntil = view.derivedUntil ?? -Infinity;
      const published = (this.dirty & STATUS) !== 0;
      if (published || !sameDerived(this.statusRow, next)) {
        // Changed by time alone: that is a change too, with its own revision.
        if (!published) this.statusRevision = this.owner.bump();
        this.statusRow = Object.freeze(next);
      }
    }
    if (this.dirty & HEALTH) this.healthRow = Object.freeze(healthEntry(view));
    this.dirty = 0;
  }
}

const sameDerived = (a: StatusEntry | undefined, b: StatusEntry): boolean =>
  a !== undefined && a.state === b.state && a.reason === b.reason && a.statusStale === b.statusStale;

export class FleetRows {
  private readonly rows = new Map<string, Rows>();
  /** Removed machines, oldest first. */
  private readonly tombstones: { machineID: string; revision: number }[] = [];
  private current: number;
  /** Readers holding an older revision than this get everything. */
  private oldestAnswerable: number;

  constructor(
    readonly source: SnapshotSource,
    readonly clock: () => number,
  ) {
    this.current = Math.max(0, Math.floor(clock())) * 1000;
    this.oldestAnswerable = this.current;
  }

  /** The revision of the latest change. */
  get revision(): number {
    return this.current;
  }

  /** A new revision. */
  bump(): number {
    return ++this.current;
  }

  /** Marks what changed in a machine (a new machine gets its rows). */
  publish(machineID: string, kind: PublishKind): void {
    const revision = this.bump();
    let rows = this.rows.get(machineID);
    if (!rows) {
      rows = new Rows(machineID, this, revision);
      this.rows.set(machineID, rows);
      this.forgetTombstone(machineID);
      return;
    }
    const bits = BITS[kind];
    rows.dirty |= bits;
    if (bits & STATUS) rows.statusRevision = revision;
    if (bits & HEALTH) rows.healthRevision = revision;
  }

  /** Forgets a removed machine's rows, leaving a tombstone. */
  remove(machineID: string): void {
    if (!this.rows.delete(machineID)) return;
    this.forgetTombstone(machineID);
    this.tombstones.push({ machineID, revision: this.bump() });
    if (this.tombstones.length > MAX_TOMBSTONES) this.oldestAnswerable = (this.tombstones.shift() as { revision: number }).revision;
  }

  private forgetTombstone(machineID: string): void {
    const at = this.tombstones.findIndex((t) => t.machineID === machineID);
    if (at >= 0) this.tombstones.splice(at, 1);
  }

  /** The machine's rows, up to date; undefined for a machine the fleet does not hold. */
  get(machineID: string, now = this.clock()): MachineRows | undefined {
    const rows = this.rows.get(machineID);
    rows?.refresh(now);
    return rows;
  }

  /**
   * The rows of `machineIDs` whose `kind` row changed after `sinceRevision`,
   * and the machines removed since (when `machineIDs` is the whole fleet;
   * a caller naming machines learns of a removed one as an unknown machine).
   */
  changedSince(sinceRevision: number, machineIDs: readonly string[], options: { kind: 'status' | 'health'; wholeFleet: boolean; now?: number }): RowChanges {
    const { kind, wholeFleet, now = this.clock() } = options;
    const asked = machineIDs.map((id) => this.get(id, now)).filter((r): r is Rows => r !== undefined);
    const revision = this.current;
    const full = sinceRevision < this.oldestAnswerable || sinceRevision > revision;
    if (full) return { revision, full, rows: asked, removed: [] };
    const changed = asked.filter((r) => (kind === 'status' ? r.statusRevision : r.healthRevision) > sinceRevision);
    const removed = wholeFleet ? this.tombstones.filter((t) => t.revision > sinceRevision).map((t) => t.machineID) : [];
    return { revision, full, rows: changed, removed };
  }
}
