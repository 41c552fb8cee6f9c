/**
 * The mirror's store on every database engine: the same cases on SQLite
 * (test/plugins/mirror/store.test.ts) and on PostgreSQL
 * (test/peers/mirror-store-postgres.test.ts): files seen and gone, snapshots
 * with their content kept once, each machine's last read, and drift items
 * decided once, with their pages.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../../core/store/migrations.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { MIGRATIONS, MirrorRepository, type DriftItem, type MirrorFile } from '../../../plugins/mirror/store.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const DIR = '//CNC_MEM/USER/PATH1/';

const file = (id: string, machineId: string, name: string): MirrorFile => ({
  id, machineId, dir: DIR, name, sha256: null, size: null, present: true, firstSeenAt: T0, lastSeenAt: null, goneAt: null, adoptedProgramId: null,
});
const drift = (id: string, fileId: string, openedAt: number): DriftItem => ({
  id, fileId, machineId: 'mch_1', assignmentId: 'asg_1', expectedSource: 'release', expectedVersionId: 'ver_1', expectedSha256: 'a'.repeat(64), foundSha256: null, snapshotId: null,
  status: 'open', openedAt, updatedAt: openedAt, decidedBy: null, decidedAt: null, note: null, resultVersionId: null, resultDeploymentId: null,
});

export function mirrorStoreCases(engine: EngineUnderTest): void {
  describe(`mirror store on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });

    async function store(): Promise<{ db: SqlDatabase; repo: MirrorRepository; database: { open(): Promise<SqlDatabase> } }> {
      const database = await engine.fresh();
      const db = await database.open();
      opened.push(db);
      await applyMigrations(db, 'mirror', MIGRATIONS);
      return { db, repo: new MirrorRepository(db), database };
    }

    it('keeps files as seen and gone, snapshots with their content once, and lists both a page at a time', async () => {
      const { db, repo } = await store();
      const a = Buffer.from('%\nO1000 (ÄÖ ✓)\nM30\n%\n');
      await db.write(async (tx) => {
        await repo.insertFile(tx, file('mf_1', 'mch_1', 'O1000'));
        await repo.insertFile(tx, file('mf_2', 'mch_1', 'O2000'));
        await repo.insertFile(tx, file('mf_3', 'mch_2', 'O1000'));
        await repo.seen(tx, 'mf_1', sha(a), a.length, T0 + 1);
        await repo.gone(tx, 'mf_2', T0 + 2);
        await repo.gone(tx, 'mf_2', T0 + 3);
        await repo.adopted(tx, 'mf_1', 'prg_1');
        await repo.addSnapshot(tx, { id: 'snp_1', fileId: 'mf_1', sha256: sha(a), size: a.length, takenAt: T0 + 1, trigger: 'read' }, a);
        await repo.addSnapshot(tx, { id: 'snp_2', fileId: 'mf_3', sha256: sha(a), size: a.length, takenAt: T0 + 2, trigger: 'read' }, a);
        await repo.addSnapshot(tx, { id: 'snp_3', fileId: 'mf_1', sha256: sha(a), size: a.length, takenAt: T0 + 3, trigger: 'deploy' }, a);
      }, { transaction: true });
      expect(await repo.file('mf_1')).toMatchObject({ sha256: sha(a), size: a.length, present: true, lastSeenAt: T0 + 1, adoptedProgramId: 'prg_1' });
      expect(await repo.file('mf_2')).toMatchObject({ present: false, goneAt: T0 + 2 });
      expect((await repo.filesOf('mch_1')).map((f) => f.id)).toEqual(['mf_1', 'mf_2']);
      expect(await db.write((tx) => repo.fileIn(tx, 'mch_2', DIR, 'O1000'))).toMatchObject({ id: 'mf_3' });
      expect((await repo.listFiles('mch_1', 1, null)).map((f) => f.id)).toEqual(['mf_1']);
      expect((await repo.listFiles('mch_1', 1, 'mf_1')).map((f) => f.id)).toEqual(['mf_2']);
      expect(await repo.counts()).toEqual({ contents: 1, snapshots: 3 });
      expect((await repo.content(sha(a)))?.equals(a)).toBe(true);
      expect(await repo.content('b'.repeat(64))).toBeUndefined();
      expect(await db.write((tx) => repo.lastSnapshot(tx, 'mf_1'))).toMatchObject({ id: 'snp_3', trigger: 'deploy' });
      expect((await repo.snapshots('mf_1', 1, null)).map((s) => s.id)).toEqual(['snp_3']);
      expect((await repo.snapshots('mf_1', 5, { takenAt: T0 + 3, id: 'snp_3' })).map((s) => s.id)).toEqual(['snp_1']);
      expect(await repo.snapshot('snp_2')).toEqual({ id: 'snp_2', fileId: 'mf_3', sha256: sha(a), size: a.length, takenAt: T0 + 2, trigger: 'read' });
    });

    it('keeps each machine\'s last read: a good one clears the error, a failed one keeps the last good time', async () => {
      const { repo } = await store();
      const running = { dir: DIR, name: 'O1000', sha256: 'c'.repeat(64), block: 12, expected: null, matches: null, readAt: T0 };
      await repo.recordRun('mch_1', T0, { error: null, files: 4, running });
      await repo.recordRun('mch_2', T0, { error: 'x'.repeat(700), files: null, running: undefined });
      await repo.recordRun('mch_1', T0 + 5, { error: 'the gateway did not answer', files: null, running: undefined });
      expect(await repo.machine('mch_1')).toEqual({ machineId: 'mch_1', lastRunAt: T0 + 5, lastOkAt: T0, lastError: 'the gateway did not answer', lastErrorAt: T0 + 5, files: 4, running });
      expect((await repo.machine('mch_2'))?.lastError).toHaveLength(600);
      expect(await repo.countMachinesWithError(['mch_1', 'mch_2', 'mch_3'])).toBe(2);
      await repo.recordRun('mch_1', T0 + 9, { error: null, files: null, running: null });
      expect(await repo.machine('mch_1')).toMatchObject({ lastOkAt: T0 + 9, lastError: null, files: 4, running: null });
      expect(await repo.countMachinesWithError([])).toBe(0);
    });

    it('lets one instance at a time claim a machine\'s interval read: only when due, until its read is recorded or its claim ends', async () => {
      const { repo, database } = await store();
      const other = await database.open();
      opened.push(other);
      const otherRepo = new MirrorRepository(other);
      const claims = await Promise.all([repo.claimRead('mch_1', 'a', T0, T0 - 60_000, 300_000), otherRepo.claimRead('mch_1', 'b', T0, T0 - 60_000, 300_000)]);
      expect(claims.sort()).toEqual([false, true]);
      await repo.recordRun('mch_1', T0 + 10, { error: null, files: 2, running: undefined });
      // Read at T0 + 10 with an interval of 60 s: not due before T0 + 60 010, whoever asks.
      expect(await otherRepo.claimRead('mch_1', 'b', T0 + 20, T0 + 20 - 60_000, 300_000)).toBe(false);
      expect(await otherRepo.claimRead('mch_1', 'b', T0 + 60_010, T0 + 10, 300_000)).toBe(true);
      // Its reader died before recording the read: the machine is claimed again once the claim has ended.
      expect(await repo.claimRead('mch_1', 'a', T0 + 100_000, T0 + 10, 300_000)).toBe(false);
      expect(await repo.claimRead('mch_1', 'a', T0 + 360_011, T0 + 10, 300_000)).toBe(true);
      expect(await repo.machine('mch_1')).toMatchObject({ lastRunAt: T0 + 10, files: 2 });
    });

    it('opens drift items, decides each once, and lists them by status a page at a time', async () => {
      const { db, repo } = await store();
      await db.write(async (tx) => {
        await repo.insertFile(tx, file('mf_1', 'mch_1', 'O1000'));
        for (const [i, id] of ['dr_1', 'dr_2', 'dr_3'].entries()) await repo.insertDrift(tx, drift(id, 'mf_1', T0 + i));
        await repo.updateFound(tx, 'dr_1', 'd'.repeat(64), 'snp_9', T0 + 10);
      }, { transaction: true });
      expect(await repo.countOpenDrift()).toBe(3);
      const accepted = await db.write((tx) => repo.decide(tx, 'dr_1', ['open'], 'accepted', { by: 'admin', at: T0 + 20, note: 'keep it', versionId: 'ver_9' }), { transaction: true });
      const again = await db.write((tx) => repo.decide(tx, 'dr_1', ['open'], 'rejected', { by: 'admin', at: T0 + 21, note: null }), { transaction: true });
      expect([accepted, again]).toEqual([true, false]);
      await db.write((tx) => repo.decide(tx, 'dr_2', ['open', 'accepted'], 'resolved', { by: null, at: T0 + 22, note: null, deploymentId: 'dep_1' }), { transaction: true });
      expect(await repo.drift('dr_1')).toMatchObject({ status: 'accepted', foundSha256: 'd'.repeat(64), snapshotId: 'snp_9', decidedBy: 'admin', note: 'keep it', resultVersionId: 'ver_9', resultDeploymentId: null });
      expect(await repo.drift('dr_2')).toMatchObject({ status: 'resolved', decidedBy: null, resultDeploymentId: 'dep_1' });
      expect((await db.write((tx) => repo.liveDriftOf(tx, 'mf_1'))).map((d) => d.id)).toEqual(['dr_1', 'dr_3']);
      expect(await repo.countOpenDrift()).toBe(1);
      expect((await repo.listDrift({}, 2, null)).map((d) => d.id)).toEqual(['dr_3', 'dr_2']);
      expect((await repo.listDrift({}, 2, { openedAt: T0 + 1, id: 'dr_2' })).map((d) => d.id)).toEqual(['dr_1']);
      expect((await repo.listDrift({ status: 'open', machineId: 'mch_1' }, 10, null)).map((d) => d.id)).toEqual(['dr_3']);
      expect(await db.write((tx) => repo.driftIn(tx, 'dr_3'))).toMatchObject({ status: 'open' });
    });
  });
}
