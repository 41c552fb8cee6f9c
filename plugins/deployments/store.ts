/**
 * Batches and deployments: what was asked (version, assignments, the exact
 * bytes each machine gets and their SHA-256), each deployment's status,
 * timeline, XState snapshot and machine version, transfer count and the
 * read-back hash, and what assignments release to machines. Portable SQL.
 * The states of running deployments are written by deployment-states.ts.
 */
import type { ProgramsServices } from '../../core/roles/programs/context.js';
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';
import { DeploymentStates, setReleases, type AuditAppender } from './deployment-states.js';
import { HeldRows } from './held-rows.js';
import { DEPLOYMENTS, type Lease } from './lease.js';
import type { DeploymentStatus } from './machine.js';

export { MIGRATIONS } from './schema.js';
export type { AuditAppender } from './deployment-states.js';
export { DEPLOYMENT_PURPOSES, type DeploymentPurpose, type DeploymentRow, type NewDeployment, type Release, type TimelineEntry } from './records.js';
import type { TraceCarrier } from './trace.js';
import { COLUMNS, releaseOf, rowOf, type DeploymentPurpose, type DeploymentRow, type NewDeployment, type Release } from './records.js';

export class DeploymentRepository {
  /** How the states of the deployments this instance runs are stored (deployment-states.ts). */
  private readonly states: DeploymentStates;
  /** The deployments this instance holds, each under its epoch (held-rows.ts). */
  readonly held: HeldRows;

  constructor(
    private readonly db: SqlDatabase,
    /** The audit chain: a final status's record is appended in the transaction that stores it. */
    audit: AuditAppender,
    /** This instance's lease: it writes only the deployments it holds. */
    readonly lease: Lease,
    /** Where deployment.completed and deployment.failed go, in the transaction of the final status. */
    outbox?: ProgramsServices['webhooks.outbox'],
    /** The service's clock, for the leases' ends. */
    now: () => number = Date.now,
  ) {
    this.states = new DeploymentStates(db, audit, lease, outbox);
    this.held = new HeldRows(db, DEPLOYMENTS, lease, now);
  }

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
    batch: {
      id: string; versionId: string | null; purpose: DeploymentPurpose; isTrial: boolean; trialHours: number | null; key: string | null; requestHash: string; answer: string; createdBy: string; createdAt: number; deadline: number;
      /** The batch span's trace context, stored with the batch and each of its deployments (trace.ts). */
      trace?: TraceCarrier | null;
    },
    deployments: readonly NewDeployment[],
    machineVersion: number,
  ): Promise<DeploymentRow[]> {
    const trace = batch.trace ?? null;
    await tx.run('INSERT INTO deploy_batches (id, version_id, is_trial, trial_hours, idempotency_key, request_hash, answer, created_by, created_at, trace_parent, trace_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      batch.id, batch.versionId ?? '', batch.isTrial ? 1 : 0, batch.trialHours, batch.key, batch.requestHash, batch.answer, batch.createdBy, batch.createdAt, trace?.traceparent ?? null, trace?.tracestate ?? null,
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
    const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \'Queued\', NULL, 0, NULL, ?, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, ?, 1, ?, ?)';
    // Held by this instance, which starts their actors at once: its first claim, epoch 1.
    const leaseUntil = batch.createdAt + this.lease.ms;
    for (let i = 0; i < deployments.length; i += 250) {
      const chunk = deployments.slice(i, i + 250);
      await tx.run(
        `INSERT INTO deploy_deployments (id, batch_id, assignment_id, machine_id, gateway_id, version_id, dir, file_name, sha256, size, status, reason, transfers, read_back_sha256, timeline, snapshot, machine_version, deadline, created_by, created_at, updated_at, finished_at, purpose, holder, lease_until, lease_epoch, trace_parent, trace_state)
         VALUES ${chunk.map(() => ROW).join(', ')}`,
        chunk.flatMap((d) => [
          d.id, batch.id, d.assignmentId ?? '', d.machineId, d.gatewayId, batch.versionId ?? '', d.dir, d.fileName, d.sha256, d.content.length, timeline, machineVersion, batch.deadline,
          batch.createdBy, batch.createdAt, batch.createdAt, batch.purpose, this.lease.holder, leaseUntil, trace?.traceparent ?? null, trace?.tracestate ?? null,
        ]),
      );
    }
    // The rows as stored, so the runner starts them without reading them back.
    return deployments.map((d) => ({
      id: d.id, batchId: batch.id, assignmentId: d.assignmentId || null, machineId: d.machineId, gatewayId: d.gatewayId, versionId: batch.versionId || null, purpose: batch.purpose,
      dir: d.dir, fileName: d.fileName, sha256: d.sha256, size: d.content.length, status: 'Queued', reason: null, transfers: 0, readBackSha256: null,
      timeline: [{ status: 'Queued', at: batch.createdAt }], snapshot: null, machineVersion, deadline: batch.deadline, createdBy: batch.createdBy,
      createdAt: batch.createdAt, updatedAt: batch.createdAt, finishedAt: null, holder: this.lease.holder, leaseEpoch: 1, trace,
    }));
  }

  /** Keeps rows just committed as the last written state of unfinished deployments (their first transitions then read nothing). */
  track(rows: readonly DeploymentRow[]): void {
    this.states.track(rows);
  }

  /** Drops the rows kept of these deployments (claimed from another instance, or lost to one): they are read afresh. */
  forget(ids: Iterable<string>): void {
    this.states.forget(ids);
  }

  /** Stores a transition under `epoch`; answers whether it was stored (deployment-states.ts). */
  transition(id: string, epoch: number, status: DeploymentStatus, reason: string | null, at: number, snapshot: string, machineVersion: number): Promise<boolean> {
    return this.states.transition(id, epoch, status, reason, at, snapshot, machineVersion);
  }

  /** Records the final status under `epoch`, once, with its audit record, release and event (deployment-states.ts). */
  finish(id: string, epoch: number, status: 'Succeeded' | 'Failed' | DeploymentStatus, reason: string | null, at: number, snapshot: string | null, readBackSha256: string | null = null): Promise<DeploymentRow | undefined> {
    return this.states.finish(id, epoch, status, reason, at, snapshot, readBackSha256);
  }

  /** Opens a transfer under `epoch` (with `count`, counting it); answers whether this instance still holds the deployment under it (deployment-states.ts). */
  openTransfer(id: string, epoch: number, count: boolean, at: number): Promise<boolean> {
    return this.states.openTransfer(id, epoch, count, at);
  }

  async setRelease(tx: WriteTx, r: Release): Promise<void> {
    await setReleases(tx, [r]);
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
