/**
 * Batches and deployments: what was asked (version, assignments, the exact
 * bytes each machine gets and their SHA-256), each deployment's status,
 * timeline, XState snapshot and machine version, transfer count and the
 * read-back hash. Portable SQL.
 */
import type { ProgramsServices } from '../../core/roles/programs/context.js';
import type { AuditEntry } from '../../core/roles/programs/audit/chain.js';
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import type { Lease } from './lease.js';
import type { DeploymentStatus } from './machine.js';

export { MIGRATIONS } from './schema.js';
export { DEPLOYMENT_PURPOSES, type DeploymentPurpose, type DeploymentRow, type NewDeployment, type Release, type TimelineEntry } from './records.js';
import { COLUMNS, releaseOf, rowOf, type DeploymentPurpose, type DeploymentRow, type NewDeployment, type Release, type TimelineEntry } from './records.js';

/** One row of a round's VALUES list: its numbers cast, since PostgreSQL would take an untyped parameter there as text. */
const CHANGE_ROW = '(?, ?, ?, ?, ?, CAST(? AS INTEGER), ?, CAST(? AS BIGINT), CAST(? AS BIGINT))';

/** What the store needs of the audit chain. */
export interface AuditAppender {
  appendMany(tx: WriteTx, entries: readonly AuditEntry[]): Promise<unknown>;
}

/** A deployment's state change, as the runner reports it: a transition, or its final status. */
interface StateChange {
  id: string;
  final: boolean;
  status: DeploymentStatus;
  reason: string | null;
  at: number;
  snapshot: string | null;
  machineVersion: number;
  readBackSha256: string | null;
}

export class DeploymentRepository {
  constructor(
    private readonly db: SqlDatabase,
    /** The audit chain: a final status's record is appended in the transaction that stores it. */
    private readonly audit: AuditAppender,
    /** This instance's lease: it writes only the deployments it holds. */
    readonly lease: Lease,
    /** Where deployment.completed and deployment.failed go, in the transaction of the final status. */
    private readonly outbox?: ProgramsServices['webhooks.outbox'],
  ) {}

  async get(id: string): Promise<DeploymentRow | undefined> {
    const r = await this.db.get(`SELECT ${COLUMNS} FROM deploy_deployments WHERE id = ?`, [id]);
    return r ? rowOf(r) : undefined;
  }

  async content(sha256: string): Promise<Buffer> {
    return (await this.db.get<{ content: Buffer }>('SELECT content FROM deploy_contents WHERE sha256 = ?', [sha256]))?.content ?? Buffer.alloc(0);
  }

  /** The batch stored under an idempotency key (read in `reader`, a write transaction's or the database). */
  async batchByKey(key: string, reader: Pick<WriteTx, 'get'> = this.db): Promise<{ id: string; requestHash: string; answer: string } | undefined> {
    const r = await reader.get('SELECT id, request_hash, answer FROM deploy_batches WHERE idempotency_key = ?', [key]);
    return r ? { id: String(r.id), requestHash: String(r.request_hash), answer: String(r.answer) } : undefined;
  }

  async insertBatch(
    tx: WriteTx,
    batch: { id: string; versionId: string | null; purpose: DeploymentPurpose; isTrial: boolean; trialHours: number | null; key: string | null; requestHash: string; answer: string; createdBy: string; createdAt: number; deadline: number },
    deployments: readonly NewDeployment[],
    machineVersion: number,
  ): Promise<DeploymentRow[]> {
    await tx.run('INSERT INTO deploy_batches (id, version_id, is_trial, trial_hours, idempotency_key, request_hash, answer, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      batch.id, batch.versionId ?? '', batch.isTrial ? 1 : 0, batch.trialHours, batch.key, batch.requestHash, batch.answer, batch.createdBy, batch.createdAt,
    ]);
    const timeline = JSON.stringify([{ status: 'Queued', at: batch.createdAt }]);
    const stored = new Set<string>();
    for (const d of deployments) {
      if (!stored.has(d.sha256)) {
        stored.add(d.sha256);
        await this.storeContent(tx, d.sha256, d.content);
      }
    }
    // Many rows per statement: a batch of 1,000 machines is 4 statements, not 1,000.
    const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \'Queued\', NULL, 0, NULL, ?, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, ?)';
    // Held by this instance, which starts their actors at once.
    const leaseUntil = batch.createdAt + this.lease.ms;
    for (let i = 0; i < deployments.length; i += 250) {
      const chunk = deployments.slice(i, i + 250);
      await tx.run(
        `INSERT INTO deploy_deployments (id, batch_id, assignment_id, machine_id, gateway_id, version_id, dir, file_name, sha256, size, status, reason, transfers, read_back_sha256, timeline, snapshot, machine_version, deadline, created_by, created_at, updated_at, finished_at, purpose, holder, lease_until)
         VALUES ${chunk.map(() => ROW).join(', ')}`,
        chunk.flatMap((d) => [
          d.id, batch.id, d.assignmentId ?? '', d.machineId, d.gatewayId, batch.versionId ?? '', d.dir, d.fileName, d.sha256, d.content.length, timeline, machineVersion, batch.deadline,
          batch.createdBy, batch.createdAt, batch.createdAt, batch.purpose, this.lease.holder, leaseUntil,
        ]),
      );
    }
    // The rows as stored, so the runner starts them without reading them back.
    return deployments.map((d) => ({
      id: d.id, batchId: batch.id, assignmentId: d.assignmentId || null, machineId: d.machineId, gatewayId: d.gatewayId, versionId: batch.versionId || null, purpose: batch.purpose,
      dir: d.dir, fileName: d.fileName, sha256: d.sha256, size: d.content.length, status: 'Queued', reason: null, transfers: 0, readBackSha256: null,
      timeline: [{ status: 'Queued', at: batch.createdAt }], snapshot: null, machineVersion, deadline: batch.deadline, createdBy: batch.createdBy,
      createdAt: batch.createdAt, updatedAt: batch.createdAt, finishedAt: null, holder: this.lease.holder,
    }));
  }

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
   * trip per row while the process is busy transferring).
   */
  private readonly changes = new WriteRounds<StateChange, DeploymentRow | undefined>(async (jobs) => {
    try {
      const stored = await this.db.write((tx) => this.apply(tx, jobs.map((job) => job.item)), { transaction: true });
      for (const job of jobs) job.resolve(stored.get(job.item));
    } catch {
      // Rolled back: the rows kept in memory may hold changes that were not stored; read them afresh,
      // and try each change alone, so one bad change fails only itself.
      this.live.clear();
      for (const job of jobs) {
        await this.db.write((tx) => this.apply(tx, [job.item]), { transaction: true }).then((stored) => job.resolve(stored.get(job.item)), (err: unknown) => {
          this.live.clear();
          job.reject(err);
        });
      }
    }
  });

  /** Transfer counts, stored in rounds of their own: a transfer waits for its count, and status changes hold nothing up. */
  private readonly counts = new WriteRounds<string>(async (jobs) => {
    for (let i = 0; i < jobs.length; i += 500) {
      const chunk = jobs.slice(i, i + 500);
      await this.db.write(async (tx) => {
        await tx.run(`UPDATE deploy_deployments SET transfers = transfers + 1 WHERE id IN (${chunk.map(() => '?').join(', ')})`, chunk.map((c) => c.item));
      }, { transaction: true });
      for (const c of chunk) {
        const row = this.live.get(c.item);
        if (row) row.transfers++;
        c.resolve();
      }
    }
  });

  /**
   * Applies state changes, in order, with set-wide statements: the rows, then
   * the final statuses' audit records, releases and events. Only the changes
   * of deployments this instance still holds, unfinished, are stored (their
   * rows locked until commit, so no claim takes them meanwhile); each stored
   * change renews its row's lease.
   */
  private async apply(tx: WriteTx, changes: readonly StateChange[]): Promise<Map<StateChange, DeploymentRow>> {
    const changed = new Map<string, DeploymentRow>();
    /** Each final status, with its row as stored. */
    const final = new Map<StateChange, DeploymentRow>();
    const finished: { row: DeploymentRow; reason: string | null; at: number }[] = [];
    const held = await this.held(tx, changes);
    for (const c of changes) {
      if (!held.has(c.id)) continue;
      const row = await this.appendTimeline(tx, c.id, { status: c.status, at: c.at, ...(c.reason ? { reason: c.reason } : {}) });
      if (!row || row.finishedAt !== null) continue;
      if (c.final) {
        Object.assign(row, { status: c.status, reason: c.reason, snapshot: c.snapshot, readBackSha256: c.readBackSha256 ?? row.readBackSha256, updatedAt: c.at, finishedAt: c.at });
        this.live.delete(c.id);
        finished.push({ row, reason: c.reason, at: c.at });
        final.set(c, row);
      } else {
        Object.assign(row, { status: c.status, reason: c.reason, snapshot: c.snapshot, machineVersion: c.machineVersion, updatedAt: c.at });
      }
      changed.set(row.id, row);
    }
    const rows = [...changed.values()];
    const leaseUntil = Math.max(...changes.map((c) => c.at)) + this.lease.ms;
    for (let i = 0; i < rows.length; i += 100) {
      const part = rows.slice(i, i + 100);
      await tx.run(
        `WITH v(id, status, reason, timeline, snapshot, machine_version, read_back_sha256, updated_at, finished_at) AS (VALUES ${part.map(() => CHANGE_ROW).join(', ')})
         UPDATE deploy_deployments SET status = v.status, reason = v.reason, timeline = v.timeline, snapshot = v.snapshot, machine_version = v.machine_version,
           read_back_sha256 = v.read_back_sha256, updated_at = v.updated_at, finished_at = v.finished_at, lease_until = ?
         FROM v WHERE deploy_deployments.id = v.id`,
        [...part.flatMap((r) => [r.id, r.status, r.reason, JSON.stringify(r.timeline), r.snapshot, r.machineVersion, r.readBackSha256, r.updatedAt, r.finishedAt]), leaseUntil],
      );
    }
    if (finished.length === 0) return final;
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
    await this.setReleases(tx, [...releases.values()]);
    await this.outbox?.enqueueMany(tx, finished.map(({ row, reason, at }) => ({
      event: row.status === 'Succeeded' ? 'deployment.completed' as const : 'deployment.failed' as const,
      data: {
        deploymentId: row.id, batchId: row.batchId, purpose: row.purpose, machineId: row.machineId, gatewayId: row.gatewayId, versionId: row.versionId, status: row.status, dir: row.dir, fileName: row.fileName,
        sha256: row.sha256, readBackSha256: row.readBackSha256, reason, finishedAt: new Date(at).toISOString(),
      },
    })));
    return final;
  }

  /** The deployments of `changes` this instance holds and that have not finished, locked until the transaction ends. */
  private async held(tx: WriteTx, changes: readonly StateChange[]): Promise<Set<string>> {
    const ids = [...new Set(changes.map((c) => c.id))];
    const rows = await tx.all<{ id: string }>(
      `SELECT id FROM deploy_deployments WHERE id IN (${tx.dialect.textsOf}) AND holder = ? AND finished_at IS NULL${tx.dialect.lockRows}`,
      [JSON.stringify(ids), this.lease.holder],
    );
    const held = new Set(rows.map((r) => String(r.id)));
    this.forget(ids.filter((id) => !held.has(id)));
    return held;
  }

  async transition(id: string, status: DeploymentStatus, reason: string | null, at: number, snapshot: string, machineVersion: number): Promise<void> {
    await this.changes.add({ id, final: false, status, reason, at, snapshot, machineVersion, readBackSha256: null });
  }

  /**
   * Records the final status, once, with its audit record, release and event
   * in the same transaction; answers the row as stored (undefined when the
   * deployment is gone or had finished already).
   */
  finish(id: string, status: 'Succeeded' | 'Failed' | DeploymentStatus, reason: string | null, at: number, snapshot: string | null, readBackSha256: string | null = null): Promise<DeploymentRow | undefined> {
    return this.changes.add({ id, final: true, status, reason, at, snapshot, machineVersion: 0, readBackSha256 });
  }

  async setRelease(tx: WriteTx, r: Release): Promise<void> {
    await this.setReleases(tx, [r]);
  }

  /** Sets what assignments release to machines (one row per assignment and machine in `list`). */
  private async setReleases(tx: WriteTx, list: readonly Release[]): Promise<void> {
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

  async release(assignmentId: string, machineId: string): Promise<Release | undefined> {
    const r = await this.db.get('SELECT * FROM deploy_releases WHERE assignment_id = ? AND machine_id = ?', [assignmentId, machineId]);
    return r ? releaseOf(r) : undefined;
  }

  async releasesOn(machineId: string): Promise<Release[]> {
    return (await this.db.all('SELECT * FROM deploy_releases WHERE machine_id = ? ORDER BY dir, file_name', [machineId])).map(releaseOf);
  }

  /** Stores content once by its SHA-256 (inside the caller's transaction). */
  async storeContent(tx: WriteTx, sha256: string, content: Buffer): Promise<void> {
    const known = await tx.get('SELECT 1 AS x FROM deploy_contents WHERE sha256 = ?', [sha256]);
    if (!known) await tx.run('INSERT INTO deploy_contents (sha256, content) VALUES (?, ?)', [sha256, content]);
  }

  async unfinishedOn(machineId: string): Promise<{ dir: string; fileName: string }[]> {
    return (await this.db.all('SELECT dir, file_name FROM deploy_deployments WHERE machine_id = ? AND finished_at IS NULL', [machineId])).map((r) => ({ dir: String(r.dir), fileName: String(r.file_name) }));
  }

  async countFailedSince(since: number): Promise<number> {
    return Number((await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM deploy_deployments WHERE status = 'Failed' AND finished_at >= ?", [since]))?.n ?? 0);
  }

  /** Counts a transfer (started, or sent again after a restart or a failed call). */
  countTransfer(id: string): Promise<void> {
    return this.counts.add(id);
  }

  async unfinished(): Promise<DeploymentRow[]> {
    return (await this.db.all(`SELECT ${COLUMNS} FROM deploy_deployments WHERE finished_at IS NULL ORDER BY created_at, id`)).map(rowOf);
  }

  async list(filter: { batchId?: string; status?: string; machineId?: string; purpose?: string; from?: number; to?: number }, limit: number, before: { createdAt: number; id: string } | null): Promise<DeploymentRow[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const add = (sql: string, value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(sql);
      params.push(value);
    };
    add('batch_id = ?', filter.batchId);
    add('status = ?', filter.status);
    add('machine_id = ?', filter.machineId);
    add('purpose = ?', filter.purpose);
    add('created_at >= ?', filter.from);
    add('created_at < ?', filter.to);
    if (before) {
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(before.createdAt, before.createdAt, before.id);
    }
    const rows = await this.db.all(`SELECT ${COLUMNS} FROM deploy_deployments${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`, [...params, limit]);
    return rows.map(rowOf);
  }
}
