/**
 * Trials: one per machine of a trial batch, with the release it replaced
 * (what a pull-back puts back), its rules, the latest verdict and its
 * evidence, the decision, and its XState snapshot. Portable SQL.
 */
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';
import { numOrNull } from '../../core/store/row-values.js';
import type { Migration } from '../../core/store/migrations.js';
import { HeldRows } from './held-rows.js';
import { claimRows, releaseRows, TRIALS, type Lease } from './lease.js';
import type { Decision, TrialEvent, TrialStatus } from './trial-machine.js';
import type { TrialEvidence, TrialRules, Verdict } from './trial-verdict.js';

export const TRIAL_MIGRATIONS: readonly Migration[] = [
  {
    id: 3,
    name: 'trials',
    up: [
      `CREATE TABLE deploy_trials (
         id TEXT PRIMARY KEY,
         deployment_id TEXT NOT NULL UNIQUE REFERENCES deploy_deployments(id),
         batch_id TEXT NOT NULL,
         assignment_id TEXT NOT NULL,
         machine_id TEXT NOT NULL,
         version_id TEXT NOT NULL,
         dir TEXT NOT NULL,
         file_name TEXT NOT NULL,
         previous_version_id TEXT,
         previous_sha256 TEXT,
         previous_dir TEXT,
         previous_file_name TEXT,
         status TEXT NOT NULL,
         verdict TEXT,
         evidence TEXT,
         evaluated_at BIGINT,
         rules TEXT NOT NULL,
         trial_hours REAL NOT NULL,
         started_at BIGINT,
         ends_at BIGINT,
         pull_back_deployment_id TEXT,
         decision TEXT,
         reason TEXT,
         snapshot TEXT,
         machine_version INTEGER NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         finished_at BIGINT
       )`,
      'CREATE INDEX deploy_trials_status ON deploy_trials(status)',
      'CREATE INDEX deploy_trials_machine ON deploy_trials(machine_id, created_at)',
    ],
  },
];

export interface TrialRow {
  id: string;
  deploymentId: string;
  batchId: string;
  assignmentId: string;
  machineId: string;
  versionId: string;
  dir: string;
  fileName: string;
  previous: { versionId: string; sha256: string; dir: string; fileName: string } | null;
  status: TrialStatus;
  verdict: Verdict | null;
  evidence: TrialEvidence | null;
  evaluatedAt: number | null;
  rules: TrialRules;
  trialHours: number;
  startedAt: number | null;
  endsAt: number | null;
  pullBackDeploymentId: string | null;
  decision: Decision | null;
  reason: string | null;
  snapshot: string | null;
  machineVersion: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The instance that drives the trial (or, once ended, ended it); null until one claims it. */
  holder: string | null;
  /** A decision received by an instance that did not hold the trial, waiting for its holder. */
  pendingDecision: PendingDecision | null;
  /** Grows at every claim: its holder stores its states under the epoch it claimed it with (lease.ts). */
  leaseEpoch: number;
}

/** A promote or pull-back stored for the trial's holder to carry out; `decision.requestId` names the request. */
export interface PendingDecision {
  type: TrialEvent['type'];
  decision: Decision & { requestId: string };
  at: number;
}

const json = <T>(v: unknown): T | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as T));

const rowOf = (r: Record<string, unknown>): TrialRow => ({
  id: String(r.id), deploymentId: String(r.deployment_id), batchId: String(r.batch_id), assignmentId: String(r.assignment_id), machineId: String(r.machine_id),
  versionId: String(r.version_id), dir: String(r.dir), fileName: String(r.file_name),
  previous: r.previous_sha256 ? { versionId: String(r.previous_version_id), sha256: String(r.previous_sha256), dir: String(r.previous_dir), fileName: String(r.previous_file_name) } : null,
  status: r.status as TrialStatus, verdict: (r.verdict as Verdict | null) ?? null, evidence: json<TrialEvidence>(r.evidence), evaluatedAt: numOrNull(r.evaluated_at),
  rules: JSON.parse(String(r.rules)) as TrialRules, trialHours: Number(r.trial_hours), startedAt: numOrNull(r.started_at), endsAt: numOrNull(r.ends_at),
  pullBackDeploymentId: r.pull_back_deployment_id ? String(r.pull_back_deployment_id) : null, decision: json<Decision>(r.decision),
  reason: r.reason === null ? null : String(r.reason), snapshot: r.snapshot === null ? null : String(r.snapshot), machineVersion: Number(r.machine_version),
  createdBy: String(r.created_by), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at), finishedAt: numOrNull(r.finished_at),
  holder: r.holder === null || r.holder === undefined ? null : String(r.holder), pendingDecision: json<PendingDecision>(r.pending_decision),
  leaseEpoch: Number(r.lease_epoch ?? 0),
});

export interface NewTrial {
  id: string;
  deploymentId: string;
  batchId: string;
  assignmentId: string;
  machineId: string;
  versionId: string;
  dir: string;
  fileName: string;
  previous: TrialRow['previous'];
  rules: TrialRules;
  trialHours: number;
  createdBy: string;
  createdAt: number;
}

export class TrialRepository {
  /** The trials this instance holds, each under its epoch (held-rows.ts): it stores their states under that epoch only. */
  readonly held: HeldRows;

  constructor(
    private readonly db: SqlDatabase,
    /** This instance's lease: it stores the states of the trials it holds only. */
    readonly lease: Lease,
    /** The service's clock, for the leases' ends. */
    now: () => number = Date.now,
  ) {
    this.held = new HeldRows(db, TRIALS, lease, now);
  }

  /** Stores a new trial, held by this instance under epoch 1 (in `tx`: a rollback leaves a hold of a trial nobody runs, which stores nothing). */
  async insert(tx: WriteTx, t: NewTrial, machineVersion: number): Promise<void> {
    this.held.hold(t.id, 1, performance.now());
    await tx.run(
      `INSERT INTO deploy_trials (id, deployment_id, batch_id, assignment_id, machine_id, version_id, dir, file_name, previous_version_id, previous_sha256, previous_dir, previous_file_name,
         status, verdict, evidence, evaluated_at, rules, trial_hours, started_at, ends_at, pull_back_deployment_id, decision, reason, snapshot, machine_version, created_by, created_at, updated_at, finished_at,
         holder, lease_until, lease_epoch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'Deploying', NULL, NULL, NULL, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?, NULL, ?, ?, 1)`,
      [
        t.id, t.deploymentId, t.batchId, t.assignmentId, t.machineId, t.versionId, t.dir, t.fileName, t.previous?.versionId ?? null, t.previous?.sha256 ?? null,
        t.previous?.dir ?? null, t.previous?.fileName ?? null, JSON.stringify(t.rules), t.trialHours, machineVersion, t.createdBy, t.createdAt, t.createdAt,
        // Held by the instance that stores it, which starts its actor at once: its first claim, epoch 1.
        this.lease.holder, t.createdAt + this.lease.ms,
      ],
    );
  }

  async get(id: string): Promise<TrialRow | undefined> {
    const r = await this.db.get('SELECT * FROM deploy_trials WHERE id = ?', [id]);
    return r ? rowOf(r) : undefined;
  }

  /** The trial if this instance holds it, under the epoch it claimed it with, and it has not ended; its row locked until the transaction ends. */
  async heldTx(tx: WriteTx, id: string): Promise<TrialRow | undefined> {
    const epoch = this.held.epochOf(id);
    if (epoch === undefined) return undefined;
    const r = await tx.get(`SELECT * FROM deploy_trials WHERE id = ? AND holder = ? AND lease_epoch = ? AND finished_at IS NULL${tx.dialect.lockRows}`, [id, this.lease.holder, epoch]);
    return r ? rowOf(r) : undefined;
  }

  /** Claims unfinished trials whose lease has ended (with `everything`, every unfinished one); each is held under the epoch of its claim. */
  async claim(now: number, options: { everything?: boolean } = {}): Promise<TrialRow[]> {
    const at = performance.now();
    const rows = (await claimRows(this.db, TRIALS, this.lease, now, options)).map(rowOf);
    for (const t of rows) this.held.hold(t.id, t.leaseEpoch, at);
    return rows;
  }

  /** Renews this instance's leases on trials; answers those it still holds, each with its epoch. */
  renew(): Promise<Map<string, number>> {
    return this.held.renew();
  }

  /** Ends this instance's leases on trials at once (a clean stop). */
  release(): Promise<void> {
    return releaseRows(this.db, TRIALS, this.lease);
  }

  /** Stores a decision for the holder of an unfinished trial, unless another one waits already; answers whether it was stored. */
  async requestDecision(id: string, pending: PendingDecision): Promise<boolean> {
    const r = await this.db.write((tx) => tx.run('UPDATE deploy_trials SET pending_decision = ? WHERE id = ? AND finished_at IS NULL AND pending_decision IS NULL', [JSON.stringify(pending), id]));
    return r.changes === 1;
  }

  /** The decisions waiting for this instance, as holder. */
  async pendingDecisions(): Promise<{ id: string; pending: PendingDecision }[]> {
    const rows = await this.db.all('SELECT id, pending_decision FROM deploy_trials WHERE holder = ? AND pending_decision IS NOT NULL AND finished_at IS NULL ORDER BY id', [this.lease.holder]);
    return rows.map((r) => ({ id: String(r.id), pending: json<PendingDecision>(r.pending_decision) as PendingDecision }));
  }

  /** Drops a waiting decision the holder could not carry out, with the reason on the trial. */
  async refuseDecision(id: string, requestId: string, reason: string, at: number): Promise<void> {
    await this.db.write(async (tx) => {
      const t = await this.heldTx(tx, id);
      if (t?.pendingDecision?.decision.requestId !== requestId) return;
      await tx.run('UPDATE deploy_trials SET pending_decision = NULL, reason = ?, updated_at = ? WHERE id = ?', [reason, at, id]);
    }, { transaction: true });
  }

  async unfinished(): Promise<TrialRow[]> {
    return (await this.db.all('SELECT * FROM deploy_trials WHERE finished_at IS NULL ORDER BY created_at, id')).map(rowOf);
  }

  async unfinishedOn(machineId: string): Promise<TrialRow[]> {
    return (await this.db.all('SELECT * FROM deploy_trials WHERE machine_id = ? AND finished_at IS NULL', [machineId])).map(rowOf);
  }

  async countActive(): Promise<number> {
    return Number((await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM deploy_trials WHERE status IN ('Deploying', 'Active', 'PullingBack')"))?.n ?? 0);
  }

  async list(filter: { status?: string; machineId?: string; batchId?: string }, limit: number, before: { createdAt: number; id: string } | null): Promise<TrialRow[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    for (const [sql, value] of [['status = ?', filter.status], ['machine_id = ?', filter.machineId], ['batch_id = ?', filter.batchId]] as const) {
      if (value === undefined) continue;
      where.push(sql);
      params.push(value);
    }
    if (before) {
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(before.createdAt, before.createdAt, before.id);
    }
    return (await this.db.all(`SELECT * FROM deploy_trials${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`, [...params, limit])).map(rowOf);
  }

  async started(id: string, startedAt: number, endsAt: number): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE deploy_trials SET started_at = ?, ends_at = ? WHERE id = ? AND started_at IS NULL', [startedAt, endsAt, id]));
  }

  /** Stores a verdict on a trial this instance holds (locked by `heldTx` in the same transaction). */
  async recordVerdict(tx: WriteTx, id: string, evidence: TrialEvidence, at: number): Promise<void> {
    await tx.run('UPDATE deploy_trials SET verdict = ?, evidence = ?, evaluated_at = ?, updated_at = ?, lease_until = ? WHERE id = ?', [evidence.verdict, JSON.stringify(evidence), at, at, at + this.lease.ms, id]);
  }

  async setReason(id: string, reason: string | null, at: number): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE deploy_trials SET reason = ?, updated_at = ? WHERE id = ? AND holder = ? AND lease_epoch = ?', [reason, at, id, this.lease.holder, this.held.epochOf(id) ?? -1]));
  }

  /**
   * Records the pull-back deployment made for a trial, in the transaction
   * that makes it: only on a trial this instance holds (under its epoch) that has none yet, so
   * a trial taken over never gets a second one (the transaction fails and
   * makes nothing). `null` forgets a failed one, so a new pull-back makes another.
   */
  async setPullBack(tx: WriteTx, id: string, deploymentId: string | null): Promise<void> {
    const r = await tx.run(
      `UPDATE deploy_trials SET pull_back_deployment_id = ? WHERE id = ? AND holder = ? AND lease_epoch = ?${deploymentId === null ? '' : ' AND pull_back_deployment_id IS NULL'}`,
      [deploymentId, id, this.lease.holder, this.held.epochOf(id) ?? -1],
    );
    if (r.changes !== 1 && deploymentId !== null) throw new Error(`trial ${id} is held by another instance, or has a pull-back deployment already`);
  }

  /** Stores a transition of a trial this instance holds (locked by `heldTx`), renewing its lease; a decision it carried out is no longer pending. */
  async transition(tx: WriteTx, id: string, update: { status: TrialStatus; reason: string | null; decision: Decision | null; snapshot: string; machineVersion: number; at: number; final: boolean; clearPending?: boolean }): Promise<void> {
    await tx.run(
      `UPDATE deploy_trials SET status = ?, reason = ?, decision = ?, snapshot = ?, machine_version = ?, updated_at = ?, finished_at = ?, lease_until = ?${update.clearPending ? ', pending_decision = NULL' : ''} WHERE id = ?`,
      [update.status, update.reason, update.decision ? JSON.stringify(update.decision) : null, update.snapshot, update.machineVersion, update.at, update.final ? update.at : null, update.at + this.lease.ms, id],
    );
  }

  async finishUnresumable(id: string, reason: string, at: number): Promise<void> {
    await this.db.write((tx) => tx.run("UPDATE deploy_trials SET status = 'Cancelled', reason = ?, updated_at = ?, finished_at = ? WHERE id = ?", [reason, at, at, id]));
  }
}
