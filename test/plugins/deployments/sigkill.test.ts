/**
 * The program service as a process, killed with SIGKILL in the middle of a
 * batch and started again: every deployment finishes exactly once (one final
 * status, one audit record), no transfer is repeated, and every machine holds
 * the bytes its deployment verified. The gateway (scripted machines with a
 * slow upload, counting uploads) runs in this process and is reached over
 * HTTP, so it outlives the service.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { adminOf, startServiceProcess, type ServiceProcess } from '../../fixtures/programs-process.js';
import { openProgramsDatabase, programsDatabaseFor } from '../../fixtures/programs.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../../fixtures/scripted-machine.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const MACHINES = Array.from({ length: 16 }, (_, i) => `kill-K${String(i + 1).padStart(2, '0')}`);
const PASSWORD = 'kill-test-admin-password';
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a deployment batch across a SIGKILL', () => {
  let gw: TestGateway;
  let gatewayUrl: string;
  let key: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    gw = await startTestGateway({ machines: MACHINES.map(scriptedMachineConfig), groups: [{ groupID: 'kill-cell', name: 'Kill cell', machineIDs: MACHINES }] }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    gatewayUrl = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
    for (const id of MACHINES) scriptedMachine(id).uploadDelayMs = 250;
  }, 30_000);
  afterAll(async () => {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await gw?.stop();
  });

  it('PV-24 PV-35 a service killed with SIGKILL mid-batch and started again finishes every deployment exactly once, with no transfer repeated', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'programs-kill-'));
    const configFile = join(dataDir, 'config.json');
    // On SQLite programs.db in dataDir; in the PostgreSQL run, the database the suite made for dataDir.
    const databaseUrl = await programsDatabaseFor(dataDir);
    // The restarted service is a new instance: on PostgreSQL it takes the killed one's deployments
    // over when their lease ends (on SQLite, the one file's only instance, at once), so a short lease.
    const programs = { host: '127.0.0.1', port: 0, deployments: { leaseSec: 3 }, ...(databaseUrl ? { databaseUrl } : {}) };
    writeFileSync(configFile, JSON.stringify({ roles: ['programs'], gateway: { dataDir, timeZone: 'UTC' }, programs, logLevel: 'warn', machines: [] }));
    service = await startServiceProcess(configFile, PASSWORD);
    let api = await adminOf(service.url, PASSWORD);

    const registered = await api.post('/gateways', { name: 'plant', url: gatewayUrl, secretKey: key });
    expect(registered.status).toBe(201);
    expect((await api.post(`/gateways/${registered.body.id as string}/sync`)).status).toBe(200);
    const groupId = ((await api.get('/machine-groups')).body.items ?? []).find((g) => g.name === 'Kill cell')?.id as string;
    expect(typeof groupId).toBe('string');
    const lib = (await api.post('/libraries', { name: 'Cell', approvalPolicy: { mode: 'autoRelease' } })).body.id as string;
    const programId = (await api.post('/programs', { libraryId: lib, name: 'O5100', controller: 'fanuc' })).body.id as string;
    const text = `%\nO5100 (HOUSING)\n${Array.from({ length: 2000 }, (_, i) => `N${(i + 1) * 10} G01 X${i}. Y${i % 50}. F300`).join('\n')}\nM30\n%\n`;
    const uploaded = await api.post(`/programs/${programId}/versions`, { contentBase64: Buffer.from(text).toString('base64'), notes: '' });
    const version = (await api.post(`/versions/${uploaded.body.id as string}/submit`)).body.version as { id: string };
    const assignment = (await api.post('/machine-assignments', { programId, groupId, dir: DIR })).body.id as string;
    const batch = await api.post('/deployments', { versionId: version.id, assignmentIds: [assignment], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const batchId = batch.body.batchId as string;
    const ids = (batch.body.deployments as { id: string }[]).map((d) => d.id);
    expect(ids).toHaveLength(MACHINES.length);

    // Kill it once some deployments have finished and others have not.
    const statuses = async () => ((await api.get(`/deployments?batchId=${batchId}&limit=100`)).body.items ?? []).map((d) => String(d.status));
    for (const deadline = Date.now() + 30_000; ; ) {
      const now = await statuses();
      const done = now.filter((s) => s === 'Succeeded').length;
      if (done >= 1 && done <= MACHINES.length - 6) break;
      if (done > MACHINES.length - 6 || Date.now() > deadline) throw new Error(`could not catch the batch mid-way: ${now.join(', ')}`);
      await sleep(20);
    }
    service.child.kill('SIGKILL');
    expect((await service.exited).signal).toBe('SIGKILL');
    const uploadsAtKill = MACHINES.reduce((n, id) => n + scriptedMachine(id).uploads, 0);
    expect(uploadsAtKill).toBeLessThan(MACHINES.length);

    service = await startServiceProcess(configFile, PASSWORD);
    api = await adminOf(service.url, PASSWORD);
    let rows: Record<string, unknown>[];
    for (const deadline = Date.now() + 60_000; ; ) {
      rows = (await api.get(`/deployments?batchId=${batchId}&limit=100`)).body.items ?? [];
      if (rows.length === ids.length && rows.every((d) => d.status === 'Succeeded' || d.status === 'Failed')) break;
      if (Date.now() > deadline) throw new Error(`not finished after the restart: ${rows.map((d) => `${String(d.status)} ${String(d.reason ?? '')}`).join('; ')}`);
      await sleep(100);
    }
    expect(rows.map((d) => d.status)).toEqual(ids.map(() => 'Succeeded'));
    for (const d of rows) expect(d.readBackSha256).toBe(d.sha256);
    // No transfer repeated: each machine got exactly one upload, and holds the verified bytes.
    for (const id of MACHINES) {
      const m = scriptedMachine(id);
      expect({ id, uploads: m.uploads }).toEqual({ id, uploads: 1 });
      const onMachine = m.files.get(`${DIR}O5100`);
      expect(onMachine === undefined ? null : sha(onMachine)).toBe(rows[0]?.sha256);
    }
    const verify = await api.get('/audit/verify');
    expect(verify.body).toMatchObject({ intact: true, firstBrokenSeq: null });

    service.child.kill('SIGTERM');
    expect((await service.exited).code).toBe(0);
    // Exactly one final record per deployment, whatever the crash cut off.
    const db = await openProgramsDatabase(dataDir);
    try {
      const finals = await db.all<{ entity_id: string; n: number }>(
        "SELECT entity_id, COUNT(*) AS n FROM audit_log WHERE action IN ('deployment.succeeded', 'deployment.failed') GROUP BY entity_id",
      );
      expect(finals.map((f) => f.entity_id).sort()).toEqual([...ids].sort());
      expect(finals.every((f) => Number(f.n) === 1)).toBe(true);
    } finally {
      await db.close();
    }
  }, 120_000);
});
