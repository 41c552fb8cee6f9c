/**
 * A backup taken while a 1,000-machine gateway writes its history and the
 * program service beside it runs a deployment batch, both on one data
 * directory, then restored into another and started there: the program
 * service's audit chain is intact, every deployment of the batch ends in
 * one final state (those caught mid-transfer resume), and the gateway's
 * history sequence numbers have no gap and go on without a duplicate.
 * The batch's machines keep their program files across the gateway's
 * restart, as controllers do (scripted machines, which live beside the
 * gateway rather than in it): a deployment caught after its transfer reads
 * back what the machine holds, not a simulator started afresh.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDataDirectory, restoreDataDirectory } from '../../core/backup/backup.js';
import { KEPT_FILES } from '../../core/roles/index.js';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import type { FencingToken, GatewayLink } from '../../core/gateway-link/types.js';
import { Database } from '../../core/store/database.js';
import { assignmentsPlugin } from '../../plugins/assignments/index.js';
import { auditApiPlugin } from '../../plugins/audit-api/index.js';
import { deploymentsPlugin } from '../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../plugins/gateways/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { webhooksPlugin } from '../../plugins/webhooks/index.js';
import { CountingLink } from '../fixtures/counting-link.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachineConfig } from '../fixtures/scripted-machine.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../fixtures/programs-accounts.js';

const MACHINES = 1000;
const BATCH = 40;
const PLUGINS = [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin, auditApiPlugin];
const FINAL = new Set(['Succeeded', 'Failed']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The gateway's configuration: 1,000 machines sampled every second, the first BATCH of them in one group. Those get the
 * program: scripted machines, whose files outlive a gateway (a simulator's are gone when its gateway stops); the rest simulated.
 */
const fleetConfig = () => {
  const ids = Array.from({ length: MACHINES }, (_, i) => `M${String(i + 1).padStart(4, '0')}`);
  const tasks = { CNCStatus: { enabled: true, intervalMs: 1000 } };
  return {
    machines: ids.map((id, i) => (i < BATCH ? { ...scriptedMachineConfig(id), tasks } : simMachine(id, { tasks }))),
    groups: [{ groupID: 'batch', name: 'Batch', machineIDs: ids.slice(0, BATCH) }],
  };
};

/** Each upload takes a while, as a controller's would, so the batch is still running when the backup is taken. */
class SlowLink extends CountingLink {
  constructor(inner: GatewayLink, private readonly delayMs: number) {
    super(inner);
  }

  override async uploadProgram(machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken) {
    await sleep(this.delayMs);
    return super.uploadProgram(machineID, dir, name, content, fence);
  }
}

/** The history sequence numbers of gateway.db, in order. */
async function historySeqs(dataDir: string): Promise<number[]> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    return (await db.all<{ seq: number }>('SELECT seq FROM history ORDER BY seq')).map((r) => r.seq);
  } finally {
    await db.close();
  }
}

const contiguous = (seqs: readonly number[]) => seqs.every((s, i) => i === 0 || s === (seqs[i - 1] as number) + 1);

describe('backup under load', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (stops.length) await (stops.pop() as () => Promise<void>)();
  });

  it('a backup taken while history is written at 1,000 machines and a batch deploys restores to an intact audit, finished deployments and history without a gap', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backup-load-'));
    const gw: TestGateway = await startTestGateway(fleetConfig(), dataDir, { drivers: DRIVERS_WITH_SCRIPTED });
    stops.push(() => gw.stop());
    const svc: TestProgramService = await startTestProgramService({
      plugins: PLUGINS, dataDir, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new SlowLink(new InProcessGatewayLink(gw.gateway.context.interfaces), 150),
    });
    stops.push(() => svc.stop());
    const admin: Session = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
    const lib = await post('/api/v1/libraries', { name: 'Load', approvalPolicy: { mode: 'autoRelease' } });
    const programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O2000 LOAD', controller: 'fanuc' })).body.id;
    const version = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO2000 (LOAD)\nM30\n%\n').toString('base64'), notes: '' });
    await post(`/api/v1/versions/${version.body.id}/submit`);
    const groupId = (await svc.request('GET', '/api/v1/machine-groups', { cookie: admin.cookie })).body.items[0].id;
    const assignment = await post('/api/v1/machine-assignments', { programId, groupId, dir: '//CNC_MEM/USER/PATH1/' });
    // History is being written by the whole fleet before the batch starts.
    while ((await historySeqs(dataDir)).length < MACHINES) await sleep(200);
    const batch = await post('/api/v1/deployments', { versionId: version.body.id, assignmentIds: [assignment.body.id], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const ids = (batch.body.deployments as { id: string }[]).map((d) => d.id);
    await sleep(400);

    const out = join(mkdtempSync(join(tmpdir(), 'backup-load-out-')), 'backup');
    const manifest = await backupDataDirectory(dataDir, out, KEPT_FILES);
    expect(manifest.files.map((f) => f.name)).toEqual(expect.arrayContaining(['gateway.db', 'programs.db']));
    // Both roles stop (the program service first, as the runtime stops them), mid-batch.
    stops.length = 0;
    await svc.stop();
    await gw.stop();

    // Restored into another directory: what the backup holds, as the roles left it at that moment.
    const restored = mkdtempSync(join(tmpdir(), 'backup-load-restored-'));
    await restoreDataDirectory(out, restored, KEPT_FILES);
    const before = await historySeqs(restored);
    expect(before.length).toBeGreaterThanOrEqual(MACHINES);
    expect(before[0]).toBe(1);
    expect(contiguous(before)).toBe(true);
    const programsDb = await Database.open(join(restored, 'programs.db'));
    const statuses = await programsDb.all<{ status: string }>(`SELECT status FROM deploy_deployments WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    await programsDb.close();
    expect(statuses).toHaveLength(BATCH);
    // The backup caught the batch part-way: some deployments finished, others not yet.
    expect(statuses.some((s) => !FINAL.has(s.status))).toBe(true);

    const gw2 = await startTestGateway(fleetConfig(), restored, { drivers: DRIVERS_WITH_SCRIPTED });
    stops.push(() => gw2.stop());
    const svc2 = await startTestProgramService({
      plugins: PLUGINS, dataDir: restored, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new InProcessGatewayLink(gw2.gateway.context.interfaces),
    });
    stops.push(() => svc2.stop());
    const admin2 = await login(svc2, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const get = (path: string) => svc2.request('GET', path, { cookie: admin2.cookie });
    const deadline = Date.now() + 60_000;
    let rows: { id: string; status: string }[] = [];
    while (Date.now() < deadline) {
      rows = (await get(`/api/v1/deployments?batchId=${batch.body.batchId}&limit=100`)).body.items;
      if (rows.length === BATCH && rows.every((r) => FINAL.has(r.status))) break;
      await sleep(100);
    }
    expect(rows.map((r) => r.status), JSON.stringify(rows.filter((r) => r.status !== 'Succeeded'))).toEqual(Array.from({ length: BATCH }, () => 'Succeeded'));
    const verify = await get('/api/v1/audit/verify');
    expect(verify.body).toMatchObject({ intact: true, firstBrokenSeq: null });
    // One final audit record per deployment, whichever side of the backup it finished on.
    const finals = (await get(`/api/v1/audit?category=deployment&limit=1000`)).body.items
      .filter((r: { action: string; entityId: string }) => r.action === 'deployment.succeeded' && ids.includes(r.entityId));
    expect(finals).toHaveLength(BATCH);

    // The restored gateway goes on from the last sequence number, with no gap and no number used twice.
    while ((await historySeqs(restored)).length < before.length + MACHINES) await sleep(200);
    const after = await historySeqs(restored);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after[before.length]).toBe((before.at(-1) as number) + 1);
    expect(contiguous(after)).toBe(true);
  });
});
