/**
 * How a deployment's states are stored while its instance runs it: state
 * changes and opened transfers in rounds (the changes of many deployments
 * that happen together commit at once), each only while this instance holds
 * the deployment under the epoch it claimed it with (lease.ts), and a final
 * status once, with its audit record, release and event in the same
 * transaction. The deployment repository (store.ts) hands its writes here.
 */
import type { ProgramsServices } from '../../core/roles/programs/context.js';
import type { AuditEntry } from '../../core/roles/programs/audit/chain.js';
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import type { Lease } from './lease.js';
import type { DeploymentStatus } from './machine.js';
import { COLUMNS, rowOf, type DeploymentRow, type Release, type TimelineEntry } from './records.js';

/** One row of a round's VALUES list: its numbers cast, since PostgreSQL would take an untyped parameter there as text. */
const CHANGE_ROW = '(?, CAST(? AS BIGINT), ?, ?, ?, ?, CAST(? AS INTEGER), ?, CAST(? AS BIGINT), CAST(? AS BIGINT))';
/**
 * Least time between the starts of two rounds of opened transfers, ms:
 * openings that trickle in (an instance with few deployments running, or
 * with its work spread over processes) go into one statement per 50 ms
 * instead of one each, at most 50 ms later (a transfer waits for its opening).
 */
export const ROUND_GAP_MS = 50;

/**
 * Least time between the starts of two rounds of state changes, ms. Nothing
 * waits for a state to be stored (the transfer slot is free, and the next
 * step runs, as soon as the step ends), so these rounds gather longer: a
 * round with final statuses is some seven round trips (its transaction, the
 * rows, the audit chain's lock, head and records, the releases), paid once
 * per 250 ms instead of for every second deployment when an instance is
 * lightly loaded. A final status is stored at most this much later; a
 * deployment's steps take seconds.
 */
export const STATE_ROUND_GAP_MS = 250;

/** One opened transfer of a round: the deployment, its epoch, the transfers it counts. */
const OPEN_ROW = '(?, CAST(? AS BIGINT), CAST(? AS INTEGER))';

/** What the store needs of the audit chain. */
export interface AuditAppender {
  appendMany(tx: WriteTx, entries: readonly AuditEntry[]): Promise<unknown>;
}

/** A deployment's state change, as the runner reports it: a transition, or its final status. */
interface StateChange {
  id: string;
  /** The epoch its actor runs under: stored only while the row has it. */
  epoch: number;
  final: boolean;
  status: DeploymentStatus;
  reason: string | null;
  at: number;
  snapshot: string | null;
  machineVersion: number;
  readBackSha256: string | null;
}

/** Sets what assignments release to machines (one row per assignment and machine in `list`). */
export async function setReleases(tx: WriteTx, list: readonly Release[]): Promise<void> {
  for (let i = 0; i < list.length; i += 100) {
    const part = list.slice(i, i + 100);
    await tx.run(
      `INSERT INTO deploy_releases (assignment_id, machine_id, version_id, sha256, dir, file_name, deployment_id, released_at, released_by) VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (assignment_id, machine_id) DO UPDATE SET version_id = excluded.version_id, sha256 = excluded.sha256, dir = excluded.dir, file_name = excluded.file_name,
         deployment_id = excluded.deployment_id, released_at = excluded.released_at, released_by = excluded.released_by`,
      part.flatMap((r) => [r.assignmentId, r.machineId, r.versionId, r.sha256, r.dir, r.fileName, r.deploymentId, r.releasedAt, r.releasedBy]),
    );
  }
}

export class DeploymentStates {
  constructor(
    private readonly db: SqlDatabase,
    private readonly audit: AuditAppender,
    /** This instance's lease: it writes only the deployments it holds. */
    private readonly lease: Lease,
    /** Where deployment.completed and deployment.failed go, in the transaction of the final status. */
    private readonly outbox?: ProgramsServices['webhooks.outbox'],
  ) {}

  /** Keeps rows just committed as the last written state of unfinished deployments (their first transitions then read nothing). */
  track(rows: readonly DeploymentRow[]): void {
    for (const row of rows) if (row.finishedAt === null) this.live.set(row.id, structuredClone(row));
  }

  /** Drops the rows kept of these deployments (claimed from another instance, or lost to one): they are read afresh. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.live.delete(id);
  }

  /**
   * Rows of unfinished deployments as last written: the instance holding a
   * deployment is its only writer, so a transition appends to the timeline without reading the row
   * back first. Dropped when the deployment finishes.
   */
  private readonly live = new Map<string, DeploymentRow>();

  private async appendTimeline(tx: WriteTx, id: string, entry: TimelineEntry): Promise<DeploymentRow | undefined> {
    let row = this.live.get(id);
    if (!row) {
      const r = await tx.get(`SELECT ${COLUMNS} FROM deploy_deployments WHERE id = ?`, [id]);
      if (!r) return undefined;
      row = rowOf(r);
      if (row.finishedAt === null) this.live.set(id, row);
    }
    const last = row.timeline[row.timeline.length - 1];
    if (last?.status !== entry.status || last.reason !== entry.reason) row.timeline.push(entry);
    // A timeline stays small: a long retry keeps its first and last entries.
    if (row.timeline.length > 50) row.timeline.splice(10, row.timeline.length - 50);
    return row;
  }

  /**
   * State changes, stored in rounds: the changes of many deployments that
   * happen together commit at once, in one transaction of a few statements
   * however many deployments (one commit, not one per change, and no round
   * trip per row while the process is busy transferring). Each answers
   * whether it was stored, and a final status its row as stored.
   */
  private readonly changes = new WriteRounds<StateChange, Stored>(async (jobs) => {
    try {
      const stored = await this.db.write((tx) => this.apply(tx, jobs.map((job) => job.item)), { transaction: true });
      for (const job of jobs) job.resolve(storedOf(stored, job.item));
    } catch {
      // Rolled back: the rows kept in memory may hold changes that were not stored; read them afresh,
      // and try each change alone, so one bad change fails only itself.
      this.live.clear();
      for (const job of jobs) {
        await this.db.write((tx) => this.apply(tx, [job.item]), { transaction: true }).then((stored) => job.resolve(storedOf(stored, job.item)), (err: unknown) => {
          this.live.clear();
          job.reject(err);
        });
      }
    }
  }, { gapMs: STATE_ROUND_GAP_MS });

  /**
   * Opened transfers, in rounds of their own (a transfer waits for its
   * opening, and status changes hold nothing up): each confirms that this
   * instance still holds the deployment under its epoch, renews its lease
   * and counts the transfer when asked to, in one statement per 500.
   */
  private readonly opens = new WriteRounds<OpenedTransfer, boolean>(async (jobs) => {
    // One entry per deployment and epoch, its counts summed: a row is updated once per statement.
    const byRow = new Map<string, OpenedTransfer>();
    for (const { item } of jobs) {
      const key = `${item.id} ${item.epoch}`;
      const known = byRow.get(key);
      byRow.set(key, known ? { ...known, count: known.count + item.count, at: Math.max(known.at, item.at) } : item);
    }
    const opened = new Set<string>();
    const all = [...byRow.values()];
    for (let i = 0; i < all.length; i += 500) {
      const chunk = all.slice(i, i + 500);
      const rows = await this.db.write((tx) => tx.all<{ id: string; lease_epoch: number }>(
        `WITH v(vid, vepoch, n) AS (VALUES ${chunk.map(() => OPEN_ROW).join(', ')})
         UPDATE deploy_deployments SET transfers = transfers + v.n, lease_until = ?
         FROM v WHERE deploy_deployments.id = v.vid AND deploy_deployments.lease_epoch = v.vepoch AND deploy_deployments.holder = ? AND deploy_deployments.finished_at IS NULL
         RETURNING id, lease_epoch`,
        [...chunk.flatMap((o) => [o.id, o.epoch, o.count]), Math.max(...chunk.map((o) => o.at)) + this.lease.ms, this.lease.holder],
      ));
      for (const r of rows) opened.add(`${String(r.id)} ${Number(r.lease_epoch)}`);
      for (const o of chunk) {
        const row = this.live.get(o.id);
        if (!opened.has(`${o.id} ${o.epoch}`)) this.live.delete(o.id);
        else if (row) row.transfers += o.count;
      }
    }
    for (const { item, resolve } of jobs) resolve(opened.has(`${item.id} ${item.epoch}`));
  }, { gapMs: ROUND_GAP_MS });

  /**
   * Applies state changes, in order, with set-wide statements: the rows, then
   * the final statuses' audit records, releases and events. Only the changes
   * of deployments this instance still holds under the change's epoch,
   * unfinished, are stored: the statement that writes the rows checks it and
   * answers which it wrote (their rows locked until commit, so no claim takes
   * them meanwhile); each stored change renews its row's lease. Answers the
   * changes stored, a final status with its row as stored.
   */
  private async apply(tx: WriteTx, changes: readonly StateChange[]): Promise<Map<StateChange, DeploymentRow | null>> {
    // A deployment's changes of one round are under one epoch: any under another (an actor stopped a moment ago) are left out.
    const epochs = new Map(changes.map((c) => [c.id, c.epoch]));
    const changed = new Map<string, { row: DeploymentRow; epoch: number }>();
    const applied: { change: StateChange; row: DeploymentRow }[] = [];
    for (const c of changes) {
      if (epochs.get(c.id) !== c.epoch) continue;
      const row = await this.appendTimeline(tx, c.id, { status: c.status, at: c.at, ...(c.reason ? { reason: c.reason } : {}) });
      if (!row || row.finishedAt !== null) continue;
      if (c.final) {
        Object.assign(row, { status: c.status, reason: c.reason, snapshot: c.snapshot, readBackSha256: c.readBackSha256 ?? row.readBackSha256, updatedAt: c.at, finishedAt: c.at });
      } else {
        Object.assign(row, { status: c.status, reason: c.reason, snapshot: c.snapshot, machineVersion: c.machineVersion, updatedAt: c.at });
      }
      changed.set(row.id, { row, epoch: c.epoch });
      applied.push({ change: c, row });
    }
    const held = await this.writeRows(tx, [...changed.values()], Math.max(...changes.map((c) => c.at)) + this.lease.ms);
    // The rows kept of those not written hold changes that were not stored: they are read afresh next time.
    this.forget(changes.filter((c) => !held.has(c.id)).map((c) => c.id));
    const stored = new Map<StateChange, DeploymentRow | null>();
    const finished: { row: DeploymentRow; reason: string | null; at: number }[] = [];
    for (const { change: c, row } of applied) {
      if (!held.has(c.id)) continue;
      stored.set(c, c.final ? row : null);
      if (!c.final) continue;
      this.live.delete(c.id);
      finished.push({ row, reason: c.reason, at: c.at });
    }
    if (finished.length === 0) return stored;
    await this.audit.appendMany(tx, finished.map(({ row, reason }) => ({
      principalName: row.createdBy, authMethod: 'internal', category: 'deployment', action: row.status === 'Succeeded' ? 'deployment.succeeded' : 'deployment.failed',
      entityType: 'deployment', entityId: row.id, machine: row.machineId,
      details: { batchId: row.batchId, purpose: row.purpose, versionId: row.versionId, fileName: row.fileName, sha256: row.sha256, readBackSha256: row.readBackSha256, transfers: row.transfers, ...(reason ? { reason } : {}) },
    })));
    // A release deployment that succeeded is what its assignment now releases to the machine (a trial becomes it only when promoted).
    const releases = new Map<string, Release>();
    for (const { row, at } of finished) {
      if (row.status === 'Succeeded' && row.purpose === 'deploy' && row.assignmentId && row.versionId) {
        releases.set(`${row.assignmentId} ${row.machineId}`, { assignmentId: row.assignmentId, machineId: row.machineId, versionId: row.versionId, sha256: row.sha256, dir: row.dir, fileName: row.fileName, deploymentId: row.id, releasedAt: at, releasedBy: row.createdBy });
      }
    }
    await setReleases(tx, [...releases.values()]);
    await this.outbox?.enqueueMany(tx, finished.map(({ row, reason, at }) => ({
      event: row.status === 'Succeeded' ? 'deployment.completed' as const : 'deployment.failed' as const,
      data: {
        deploymentId: row.id, batchId: row.batchId, purpose: row.purpose, machineId: row.machineId, gatewayId: row.gatewayId, versionId: row.versionId, status: row.status, dir: row.dir, fileName: row.fileName,
        sha256: row.sha256, readBackSha256: row.readBackSha256, reason, finishedAt: new Date(at).toISOString(),
      },
    })));
    return stored;
  }

  /**
   * Writes the rows of a round, 100 to a statement, each only where this
   * instance still holds it under `epoch` and it has not finished (the
   * statement locks what it writes until the transaction ends); answers the
   * ids written.
   */
  private async writeRows(tx: WriteTx, rows: readonly { row: DeploymentRow; epoch: number }[], leaseUntil: number): Promise<Set<string>> {
    const written = new Set<string>();
    for (let i = 0; i < rows.length; i += 100) {
      const part = rows.slice(i, i + 100);
      const answered = await tx.all<{ id: string }>(
        `WITH v(vid, vepoch, status, reason, timeline, snapshot, machine_version, read_back_sha256, updated_at, finished_at) AS (VALUES ${part.map(() => CHANGE_ROW).join(', ')})
         UPDATE deploy_deployments SET status = v.status, reason = v.reason, timeline = v.timeline, snapshot = v.snapshot, machine_version = v.machine_version,
           read_back_sha256 = v.read_back_sha256, updated_at = v.updated_at, finished_at = v.finished_at, lease_until = ?
         FROM v WHERE deploy_deployments.id = v.vid AND deploy_deployments.lease_epoch = v.vepoch AND deploy_deployments.holder = ? AND deploy_deployments.finished_at IS NULL
         RETURNING id`,
        [
          ...part.flatMap(({ row: r, epoch }) => [r.id, epoch, r.status, r.reason, JSON.stringify(r.timeline), r.snapshot, r.machineVersion, r.readBackSha256, r.updatedAt, r.finishedAt]),
          leaseUntil, this.lease.holder,
        ],
      );
      for (const r of answered) written.add(String(r.id));
    }
    return written;
  }

  /** Stores a transition under `epoch`; answers whether it was stored (false: the deployment is no longer held under that epoch, or it finished). */
  async transition(id: string, epoch: number, status: DeploymentStatus, reason: string | null, at: number, snapshot: string, machineVersion: number): Promise<boolean> {
    return (await this.changes.add({ id, epoch, final: false, status, reason, at, snapshot, machineVersion, readBackSha256: null })).stored;
  }

  /**
   * Records the final status under `epoch`, once, with its audit record,
   * release and event in the same transaction; answers the row as stored
   * (undefined when the deployment is gone, had finished already, or is no
   * longer held under that epoch).
   */
  async finish(id: string, epoch: number, status: 'Succeeded' | 'Failed' | DeploymentStatus, reason: string | null, at: number, snapshot: string | null, readBackSha256: string | null = null): Promise<DeploymentRow | undefined> {
    return (await this.changes.add({ id, epoch, final: true, status, reason, at, snapshot, machineVersion: 0, readBackSha256 })).row;
  }

  /**
   * Opens a transfer (or counts one sent again) under `epoch`: confirms that
   * this instance still holds the deployment under it, renews its lease and,
   * with `count`, counts the transfer; answers whether it still holds it.
   */
  openTransfer(id: string, epoch: number, count: boolean, at: number): Promise<boolean> {
    return this.opens.add({ id, epoch, count: count ? 1 : 0, at });
  }
}

/** A transfer opened under an epoch: `count` transfers counted by it, `at` on the service's clock. */
interface OpenedTransfer {
  id: string;
  epoch: number;
  count: number;
  at: number;
}

/** What a state change's round answers: whether it was stored, and a final status's row as stored. */
interface Stored {
  stored: boolean;
  row?: DeploymentRow;
}

const storedOf = (stored: ReadonlyMap<StateChange, DeploymentRow | null>, change: StateChange): Stored => {
  const row = stored.get(change);
  return row ? { stored: true, row } : { stored: stored.has(change) };
};
