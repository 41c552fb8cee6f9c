/**
 * The mirror's records: every program file seen on a machine, its snapshots
 * (content kept once per SHA-256, however many files or machines hold it),
 * each machine's last read and what it was running, and the drift items.
 * Portable SQL.
 */
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';

export { MIGRATIONS } from './schema.js';
import { numOrNull, strOrNull } from '../../core/store/row-values.js';

export interface MirrorFile {
  id: string;
  machineId: string;
  dir: string;
  name: string;
  sha256: string | null;
  size: number | null;
  present: boolean;
  firstSeenAt: number;
  lastSeenAt: number | null;
  goneAt: number | null;
  adoptedProgramId: string | null;
}

export interface Snapshot {
  id: string;
  fileId: string;
  sha256: string;
  size: number;
  takenAt: number;
  trigger: string;
}

/** What the machine was running at the last read, against what is released under that name. */
export interface RunningProof {
  dir: string;
  name: string;
  sha256: string;
  block: number | null;
  /** The managed file of that name, when there is one. */
  expected: { assignmentId: string; versionId: string; sha256: string; source: 'release' | 'trial' } | null;
  /** True: the running program is byte for byte what was released; false: it differs; null: no managed file of that name. */
  matches: boolean | null;
  readAt: number;
}

export interface MirrorMachine {
  machineId: string;
  lastRunAt: number | null;
  lastOkAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  files: number;
  running: RunningProof | { error: string; readAt: number } | null;
}

export const DRIFT_STATUSES = ['open', 'accepted', 'rejected', 'resolved'] as const;
export type DriftStatus = (typeof DRIFT_STATUSES)[number];

export interface DriftItem {
  id: string;
  fileId: string;
  machineId: string;
  assignmentId: string;
  expectedSource: 'release' | 'trial';
  expectedVersionId: string;
  expectedSha256: string;
  /** Null: the file is missing on the machine. */
  foundSha256: string | null;
  snapshotId: string | null;
  status: DriftStatus;
  openedAt: number;
  updatedAt: number;
  decidedBy: string | null;
  decidedAt: number | null;
  note: string | null;
  resultVersionId: string | null;
  resultDeploymentId: string | null;
}

type Row = Record<string, unknown>;

const fileOf = (r: Row): MirrorFile => ({
  id: String(r.id), machineId: String(r.machine_id), dir: String(r.dir), name: String(r.name), sha256: strOrNull(r.sha256), size: numOrNull(r.size), present: Number(r.present) === 1,
  firstSeenAt: Number(r.first_seen_at), lastSeenAt: numOrNull(r.last_seen_at), goneAt: numOrNull(r.gone_at), adoptedProgramId: strOrNull(r.adopted_program_id),
});
const snapshotOf = (r: Row): Snapshot => ({ id: String(r.id), fileId: String(r.file_id), sha256: String(r.sha256), size: Number(r.size), takenAt: Number(r.taken_at), trigger: String(r.trigger) });
const machineOf = (r: Row): MirrorMachine => ({
  machineId: String(r.machine_id), lastRunAt: numOrNull(r.last_run_at), lastOkAt: numOrNull(r.last_ok_at), lastError: strOrNull(r.last_error), lastErrorAt: numOrNull(r.last_error_at), files: Number(r.files),
  running: r.running ? (JSON.parse(String(r.running)) as MirrorMachine['running']) : null,
});
const driftOf = (r: Row): DriftItem => ({
  id: String(r.id), fileId: String(r.file_id), machineId: String(r.machine_id), assignmentId: String(r.assignment_id), expectedSource: r.expected_source as DriftItem['expectedSource'],
  expectedVersionId: String(r.expected_version_id), expectedSha256: String(r.expected_sha256), foundSha256: strOrNull(r.found_sha256), snapshotId: strOrNull(r.snapshot_id), status: r.status as DriftStatus,
  openedAt: Number(r.opened_at), updatedAt: Number(r.updated_at), decidedBy: strOrNull(r.decided_by), decidedAt: numOrNull(r.decided_at), note: strOrNull(r.note),
  resultVersionId: strOrNull(r.result_version_id), resultDeploymentId: strOrNull(r.result_deployment_id),
});

export class MirrorRepository {
  constructor(private readonly db: SqlDatabase) {}

  async file(id: string): Promise<MirrorFile | undefined> {
    const r = await this.db.get('SELECT * FROM mirror_files WHERE id = ?', [id]);
    return r ? fileOf(r) : undefined;
  }

  async filesOf(machineId: string): Promise<MirrorFile[]> {
    return (await this.db.all('SELECT * FROM mirror_files WHERE machine_id = ? ORDER BY dir, name', [machineId])).map(fileOf);
  }

  async fileIn(tx: WriteTx, machineId: string, dir: string, name: string): Promise<MirrorFile | undefined> {
    const r = await tx.get('SELECT * FROM mirror_files WHERE machine_id = ? AND dir = ? AND name = ?', [machineId, dir, name]);
    return r ? fileOf(r) : undefined;
  }

  async insertFile(tx: WriteTx, f: MirrorFile): Promise<void> {
    await tx.run(
      'INSERT INTO mirror_files (id, machine_id, dir, name, sha256, size, present, first_seen_at, last_seen_at, gone_at, adopted_program_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [f.id, f.machineId, f.dir, f.name, f.sha256, f.size, f.present ? 1 : 0, f.firstSeenAt, f.lastSeenAt, f.goneAt, f.adoptedProgramId],
    );
  }

  async seen(tx: WriteTx, id: string, sha256: string, size: number, at: number): Promise<void> {
    await tx.run('UPDATE mirror_files SET sha256 = ?, size = ?, present = 1, last_seen_at = ?, gone_at = NULL WHERE id = ?', [sha256, size, at, id]);
  }

  async gone(tx: WriteTx, id: string, at: number): Promise<void> {
    await tx.run('UPDATE mirror_files SET present = 0, gone_at = COALESCE(gone_at, ?) WHERE id = ?', [at, id]);
  }

  async adopted(tx: WriteTx, id: string, programId: string): Promise<void> {
    await tx.run('UPDATE mirror_files SET adopted_program_id = ? WHERE id = ?', [programId, id]);
  }

  async listFiles(machineId: string, limit: number, afterId: string | null): Promise<MirrorFile[]> {
    return (await this.db.all(`SELECT * FROM mirror_files WHERE machine_id = ?${afterId ? ' AND id > ?' : ''} ORDER BY id LIMIT ?`, [machineId, ...(afterId ? [afterId] : []), limit])).map(fileOf);
  }

  async lastSnapshot(tx: WriteTx, fileId: string): Promise<Snapshot | undefined> {
    const r = await tx.get('SELECT * FROM mirror_snapshots WHERE file_id = ? ORDER BY taken_at DESC, id DESC LIMIT 1', [fileId]);
    return r ? snapshotOf(r) : undefined;
  }

  async snapshot(id: string): Promise<Snapshot | undefined> {
    const r = await this.db.get('SELECT * FROM mirror_snapshots WHERE id = ?', [id]);
    return r ? snapshotOf(r) : undefined;
  }

  async snapshots(fileId: string, limit: number, before: { takenAt: number; id: string } | null): Promise<Snapshot[]> {
    const where = before ? ' AND (taken_at < ? OR (taken_at = ? AND id < ?))' : '';
    return (await this.db.all(`SELECT * FROM mirror_snapshots WHERE file_id = ?${where} ORDER BY taken_at DESC, id DESC LIMIT ?`, [fileId, ...(before ? [before.takenAt, before.takenAt, before.id] : []), limit])).map(snapshotOf);
  }

  /** Stores a snapshot; the content once per SHA-256. */
  async addSnapshot(tx: WriteTx, snap: Snapshot, content: Buffer): Promise<void> {
    if (!(await tx.get('SELECT 1 AS x FROM mirror_contents WHERE sha256 = ?', [snap.sha256]))) {
      await tx.run('INSERT INTO mirror_contents (sha256, content) VALUES (?, ?)', [snap.sha256, content]);
    }
    await tx.run('INSERT INTO mirror_snapshots (id, file_id, sha256, size, taken_at, trigger) VALUES (?, ?, ?, ?, ?, ?)', [snap.id, snap.fileId, snap.sha256, snap.size, snap.takenAt, snap.trigger]);
  }

  async content(sha256: string): Promise<Buffer | undefined> {
    return (await this.db.get<{ content: Buffer }>('SELECT content FROM mirror_contents WHERE sha256 = ?', [sha256]))?.content;
  }

  async counts(): Promise<{ contents: number; snapshots: number }> {
    const r = await this.db.get<{ c: number; s: number }>('SELECT (SELECT COUNT(*) FROM mirror_contents) AS c, (SELECT COUNT(*) FROM mirror_snapshots) AS s');
    return { contents: Number(r?.c ?? 0), snapshots: Number(r?.s ?? 0) };
  }

  async machine(machineId: string): Promise<MirrorMachine | undefined> {
    const r = await this.db.get('SELECT * FROM mirror_machines WHERE machine_id = ?', [machineId]);
    return r ? machineOf(r) : undefined;
  }

  /**
   * Claims a machine's interval read for `reader`: only when it is due (its
   * last read at or before `dueBefore`) and no other instance's claim is
   * running (one ends `leaseMs` after it was made, or when its read is
   * recorded). One conditional UPDATE: of instances claiming at once, one
   * changes the row and the others find it claimed.
   */
  async claimRead(machineId: string, reader: string, now: number, dueBefore: number, leaseMs: number): Promise<boolean> {
    return this.db.write(async (tx) => {
      await tx.run('INSERT INTO mirror_machines (machine_id, files) VALUES (?, 0) ON CONFLICT (machine_id) DO NOTHING', [machineId]);
      const claimed = await tx.run(
        'UPDATE mirror_machines SET reader = ?, read_until = ? WHERE machine_id = ? AND (read_until IS NULL OR read_until < ?) AND (last_run_at IS NULL OR last_run_at <= ?)',
        [reader, now + leaseMs, machineId, now, dueBefore],
      );
      return claimed.changes === 1;
    }, { transaction: true });
  }

  /** Stores a read's outcome, which ends its claim. */
  async recordRun(machineId: string, at: number, outcome: { error: string | null; files: number | null; running: MirrorMachine['running'] | undefined }): Promise<void> {
    await this.db.write(async (tx) => {
      await tx.run('INSERT INTO mirror_machines (machine_id, files) VALUES (?, 0) ON CONFLICT (machine_id) DO NOTHING', [machineId]);
      await tx.run('UPDATE mirror_machines SET read_until = NULL WHERE machine_id = ?', [machineId]);
      if (outcome.error === null) {
        await tx.run('UPDATE mirror_machines SET last_run_at = ?, last_ok_at = ?, last_error = NULL, last_error_at = NULL, files = COALESCE(?, files) WHERE machine_id = ?', [at, at, outcome.files, machineId]);
      } else {
        await tx.run('UPDATE mirror_machines SET last_run_at = ?, last_error = ?, last_error_at = ? WHERE machine_id = ?', [at, outcome.error.slice(0, 600), at, machineId]);
      }
      if (outcome.running !== undefined) await tx.run('UPDATE mirror_machines SET running = ? WHERE machine_id = ?', [outcome.running ? JSON.stringify(outcome.running) : null, machineId]);
    }, { transaction: true });
  }

  async countMachinesWithError(machineIds: readonly string[]): Promise<number> {
    if (machineIds.length === 0) return 0;
    let total = 0;
    for (let i = 0; i < machineIds.length; i += 500) {
      const chunk = machineIds.slice(i, i + 500);
      const r = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM mirror_machines WHERE last_error IS NOT NULL AND machine_id IN (${chunk.map(() => '?').join(', ')})`, chunk);
      total += Number(r?.n ?? 0);
    }
    return total;
  }

  async drift(id: string): Promise<DriftItem | undefined> {
    const r = await this.db.get('SELECT * FROM mirror_drift WHERE id = ?', [id]);
    return r ? driftOf(r) : undefined;
  }

  async driftIn(tx: WriteTx, id: string): Promise<DriftItem | undefined> {
    const r = await tx.get('SELECT * FROM mirror_drift WHERE id = ?', [id]);
    return r ? driftOf(r) : undefined;
  }

  /** Drift items of a file still open or accepted (an accepted difference is not reported again). */
  async liveDriftOf(tx: WriteTx, fileId: string): Promise<DriftItem[]> {
    return (await tx.all("SELECT * FROM mirror_drift WHERE file_id = ? AND status IN ('open', 'accepted') ORDER BY opened_at", [fileId])).map(driftOf);
  }

  async insertDrift(tx: WriteTx, d: DriftItem): Promise<void> {
    await tx.run(
      `INSERT INTO mirror_drift (id, file_id, machine_id, assignment_id, expected_source, expected_version_id, expected_sha256, found_sha256, snapshot_id, status, opened_at, updated_at, decided_by, decided_at, note, result_version_id, result_deployment_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.id, d.fileId, d.machineId, d.assignmentId, d.expectedSource, d.expectedVersionId, d.expectedSha256, d.foundSha256, d.snapshotId, d.status, d.openedAt, d.updatedAt, d.decidedBy, d.decidedAt, d.note, d.resultVersionId, d.resultDeploymentId],
    );
  }

  async updateFound(tx: WriteTx, id: string, foundSha256: string | null, snapshotId: string | null, at: number): Promise<void> {
    await tx.run('UPDATE mirror_drift SET found_sha256 = ?, snapshot_id = ?, updated_at = ? WHERE id = ?', [foundSha256, snapshotId, at, id]);
  }

  /** Ends a drift item; false when it was no longer in `from`. */
  async decide(tx: WriteTx, id: string, from: readonly DriftStatus[], to: DriftStatus, d: { by: string | null; at: number; note: string | null; versionId?: string; deploymentId?: string }): Promise<boolean> {
    const result = await tx.run(
      `UPDATE mirror_drift SET status = ?, decided_by = ?, decided_at = ?, note = ?, result_version_id = COALESCE(?, result_version_id), result_deployment_id = COALESCE(?, result_deployment_id), updated_at = ?
       WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`,
      [to, d.by, d.at, d.note, d.versionId ?? null, d.deploymentId ?? null, d.at, id, ...from],
    );
    return result.changes > 0;
  }

  async listDrift(filter: { status?: string; machineId?: string }, limit: number, before: { openedAt: number; id: string } | null): Promise<DriftItem[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.machineId) {
      where.push('machine_id = ?');
      params.push(filter.machineId);
    }
    if (before) {
      where.push('(opened_at < ? OR (opened_at = ? AND id < ?))');
      params.push(before.openedAt, before.openedAt, before.id);
    }
    return (await this.db.all(`SELECT * FROM mirror_drift${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY opened_at DESC, id DESC LIMIT ?`, [...params, limit])).map(driftOf);
  }

  async countOpenDrift(): Promise<number> {
    return Number((await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM mirror_drift WHERE status = 'open'"))?.n ?? 0);
  }
}
