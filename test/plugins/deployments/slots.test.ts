/**
 * A gateway takes at most TRANSFERS_PER_GATEWAY files at once from the
 * service; a deployment waiting for its turn says so (waitingForSlot)
 * instead of looking like a transfer under way.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import type { FencingToken } from '../../../core/gateway-link/types.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { dashboardPlugin } from '../../../plugins/dashboard/index.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { TRANSFERS_PER_GATEWAY } from '../../../plugins/deployments/runner.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { CountingLink } from '../../fixtures/counting-link.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

const MACHINES = TRANSFERS_PER_GATEWAY + 2;

/** Uploads wait at the gate until it opens, then reach the gateway. */
class GatedLink extends CountingLink {
  arrived = 0;
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  release(): void {
    this.open();
  }

  override async uploadProgram(machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken) {
    this.arrived++;
    await this.gate;
    return super.uploadProgram(machineID, dir, name, content, fence);
  }
}

describe('transfer slots', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let link: GatedLink;
  let admin: Session;

  beforeAll(async () => {
    gw = await startTestGateway({
      machines: Array.from({ length: MACHINES }, (_, i) => simMachine(`M${i + 1}`)),
      groups: [{ groupID: 'all', name: 'All', machineIDs: Array.from({ length: MACHINES }, (_, i) => `M${i + 1}`) }],
    });
    link = new GatedLink(new InProcessGatewayLink(gw.gateway.context.interfaces));
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin, mirrorPlugin, dashboardPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: link, dataDir: mkdtempSync(join(tmpdir(), 'programs-slots-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it(`PV-35 with ${MACHINES} machines on one gateway, ${TRANSFERS_PER_GATEWAY} transfer and 2 say they wait for a slot; once the gateway answers, every one succeeds`, async () => {
    const post = (path: string, body: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body });
    const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });
    const lib = await post('/api/v1/libraries', { name: 'Slots', approvalPolicy: { mode: 'autoRelease' } });
    const programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O1000 SLOT', controller: 'fanuc' })).body.id;
    const v1 = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO1000\nM30\n%\n').toString('base64'), notes: '' });
    await post(`/api/v1/versions/${v1.body.id}/submit`, undefined);
    const groupId = (await get('/api/v1/machine-groups')).body.items[0].id;
    const assignment = (await post('/api/v1/machine-assignments', { programId, groupId, dir: '//CNC_MEM/USER/PATH1/' })).body.id;
    const batch = await post('/api/v1/deployments', { versionId: v1.body.id, assignmentIds: [assignment], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);

    const deadline = Date.now() + 10_000;
    while (link.arrived < TRANSFERS_PER_GATEWAY && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Give any deployment that wrongly took a fifth slot the time to reach the link.
    await new Promise((r) => setTimeout(r, 200));
    expect(link.arrived).toBe(TRANSFERS_PER_GATEWAY);
    const listed = (await get(`/api/v1/deployments?batchId=${batch.body.batchId}`)).body.items as { id: string; status: string; waitingForSlot: boolean }[];
    expect(listed).toHaveLength(MACHINES);
    expect(listed.every((d) => d.status === 'Transferring')).toBe(true);
    expect(listed.filter((d) => d.waitingForSlot)).toHaveLength(2);
    const waiting = listed.find((d) => d.waitingForSlot) as { id: string };
    expect((await get(`/api/v1/deployments/${waiting.id}`)).body).toMatchObject({ status: 'Transferring', waitingForSlot: true });
    // The overview's latest deployments say the same.
    const recent = (await get('/api/v1/dashboard/recent-deployments?limit=20')).body.items as { id: string; waitingForSlot: boolean }[];
    expect(recent.filter((d) => d.waitingForSlot).map((d) => d.id).sort()).toEqual(listed.filter((d) => d.waitingForSlot).map((d) => d.id).sort());

    link.release();
    const end = Date.now() + 10_000;
    let rows = listed;
    while (Date.now() < end) {
      rows = (await get(`/api/v1/deployments?batchId=${batch.body.batchId}`)).body.items;
      if (rows.every((d) => d.status === 'Succeeded')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(rows.map((d) => [d.status, d.waitingForSlot])).toEqual(Array.from({ length: MACHINES }, () => ['Succeeded', false]));
    expect(link.arrived).toBe(MACHINES);
  });
});
