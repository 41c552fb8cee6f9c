/**
 * Step 4 of the deployment benchmark (deploy.ts): the same batch to scripted
 * machines on a second gateway, reached over HTTP by the service running as
 * its own process, which is killed with SIGKILL once a third of the batch
 * succeeded and started again.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway } from '../fixtures/gateway.js';
import { adminOf, startServiceProcess, type ServiceProcess } from '../fixtures/programs-process.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';

export const DIR = '//CNC_MEM/USER/PATH1/';
export const ADMIN_PASSWORD = 'bench-admin-password';

/** Step 4: the service as a process, killed with SIGKILL mid-batch and started again; the machines count the uploads that reach them. */
export async function killedBatch(count: number, content: Buffer, dirs: string[]) {
  const ids = Array.from({ length: count }, (_, i) => `K${String(i + 1).padStart(3, '0')}`);
  const gw = await startTestGateway(
    { machines: ids.map((id) => ({ ...scriptedMachineConfig(id), tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } })), groups: [{ groupID: 'bench-kill', name: 'Bench kill', machineIDs: ids }] },
    undefined,
    { drivers: DRIVERS_WITH_SCRIPTED },
  );
  let service: ServiceProcess | undefined;
  try {
    const gatewayUrl = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-deploy-kill-'));
    dirs.push(dataDir);
    const configFile = join(dataDir, 'config.json');
    writeFileSync(configFile, JSON.stringify({ roles: ['programs'], gateway: { dataDir, timeZone: 'UTC' }, programs: { host: '127.0.0.1', port: 0 }, logLevel: 'warn', machines: [] }));
    service = await startServiceProcess(configFile, ADMIN_PASSWORD);
    let api = await adminOf(service.url, ADMIN_PASSWORD);
    const must = <T extends { status: number; body: Record<string, unknown> }>(what: string, res: T): T['body'] => {
      if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      return res.body;
    };
    const registered = must('register the gateway', await api.post('/gateways', { name: 'bench', url: gatewayUrl, secretKey: key }));
    must('sync the gateway', await api.post(`/gateways/${String(registered.id)}/sync`));
    const groupId = String(((await api.get('/machine-groups')).body.items ?? []).find((g) => g.name === 'Bench kill')?.id);
    const lib = must('library', await api.post('/libraries', { name: 'Bench kill', approvalPolicy: { mode: 'autoRelease' } }));
    const prg = must('program', await api.post('/programs', { libraryId: lib.id, name: 'BENCH', controller: 'fanuc', fileName: 'O7999' }));
    const version = must('version', await api.post(`/programs/${String(prg.id)}/versions`, { contentBase64: content.toString('base64'), notes: 'bench' }));
    must('submit', await api.post(`/versions/${String(version.id)}/submit`));
    const assignment = must('assignment', await api.post('/machine-assignments', { programId: prg.id, groupId, dir: DIR }));
    const batch = must('batch', await api.post('/deployments', { versionId: version.id, assignmentIds: [assignment.id], isTrial: false, trialHours: null }));
    const statuses = async () => ((await api.get(`/deployments?batchId=${String(batch.batchId)}&limit=1000`)).body.items ?? []).map((d) => String(d.status));
    let succeededAtKill = 0;
    for (const deadline = Date.now() + 60_000; succeededAtKill < count / 3; await new Promise((r) => setTimeout(r, 10))) {
      succeededAtKill = (await statuses()).filter((s) => s === 'Succeeded').length;
      if (Date.now() > deadline) throw new Error('the batch did not get a third of the way in 60 s');
    }
    service.child.kill('SIGKILL');
    await service.exited;
    service = await startServiceProcess(configFile, ADMIN_PASSWORD);
    api = await adminOf(service.url, ADMIN_PASSWORD);
    let final: string[] = [];
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 100))) {
      final = await statuses();
      if (final.length === count && final.every((s) => s === 'Succeeded' || s === 'Failed')) break;
      if (Date.now() > deadline) throw new Error(`the batch did not finish after the restart: ${final.join(', ')}`);
    }
    const uploads = ids.map((id) => scriptedMachine(id).uploads);
    return {
      succeededAtKill,
      succeeded: final.filter((s) => s === 'Succeeded').length,
      uploads: uploads.reduce((a, b) => a + b, 0),
      repeated: uploads.reduce((a, n) => a + Math.max(0, n - 1), 0),
      missing: uploads.filter((n) => n === 0).length,
    };
  } finally {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await gw.stop();
  }
}
