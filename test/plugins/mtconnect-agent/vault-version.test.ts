/**
 * The running program's vault version in the MTConnect agent, end to end: a
 * real program service deploys a published version through its in-process
 * gateway link to a simulated machine, the machine runs that file, and the
 * agent's /current shows the vault program name and the version hash on the
 * machine's Path (valid against the 2.7 schema); a machine running a file
 * that is not from the vault, and the same file written again without a
 * vault version, show UNAVAILABLE; the version survives a gateway restart.
 *
 * VA is a simulated machine told to run the program last written to it, so
 * it runs the deployed file from then on. VC runs its schedule's program (a
 * day-long cycle, so it does not change during the test) and the deployment
 * writes a file of that name: a restarted simulator starts its schedule over
 * from the same seed, so VC runs the same program after the gateway's
 * restart, where VA, its memory gone with the simulator, runs its schedule's.
 * VB gets the version under a name it does not run. After the restart the
 * agent first shows what the history said before it; the test waits for the
 * machines' first status rows after the restart.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { schemaErrors } from '../../fixtures/mtconnect/validate.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { until } from '../../fixtures/until.js';
import { GatewayReader } from '../../../plugins/mtconnect-agent/gateway-reader.js';
import { headerOf, observationsOf } from './agent-fixture.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A steady machine: no alarms, setups or emergency stops, and one program for a day. */
const machine = (machineID: string, seed: number, runsLastProgram = false) =>
  simMachine(machineID, { driverOptions: { seed, machineType: 'mill', system: 'FANUC', setupRate: 0, alarmRate: 0, estopRate: 0, cycleTimeSec: 86_400, runsLastProgram } });
const MACHINES = [machine('VA', 11, true), machine('VB', 12), machine('VC', 13)];
const DEPLOYED = 'O4801';

const dataDir = mkdtempSync(join(tmpdir(), 'gw-vault-'));
let gw: TestGateway;
let svc: TestProgramService;
let admin: Session;

const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });

const startGateway = () => startTestGateway({ machines: MACHINES, history: { flushIntervalMs: 20 } }, dataDir);

/** The agent's /current of the Path items that matter here, by data item id, and the document. */
async function pathNow(): Promise<{ xml: string; values: Record<string, string> }> {
  const url = gw.gateway.context.services.get('mtconnect-agent').url;
  const xml = await (await fetch(`${url}/current?path=//Path`)).text();
  return { xml, values: Object.fromEntries(observationsOf(xml).map((o) => [o.id, o.value])) };
}

/** The program the machine runs, as the gateway reads it. */
async function runningProgram(machineID: string): Promise<string> {
  const read = await gw.request('GET', `/api/cnc/readCNCStatusDetails?machineID=${machineID}`);
  return String((read.body.data as { program?: unknown }).program ?? '');
}

async function settle(id: string): Promise<{ status: string; reason: string | null; sha256: string }> {
  return until('the deployment finished', async () => (await get(`/api/v1/deployments/${id}`)).body, (d) => d.status === 'Succeeded' || d.status === 'Failed', 30_000);
}

beforeAll(async () => {
  gw = await startGateway();
  svc = await startTestProgramService({
    plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
    env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
    localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
  });
  admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  await until('the machines online', () => ['VA', 'VB', 'VC'].map((id) => gw.gateway.fleet.connectionState(id)), (s) => s.every((c) => c === 'online'), 30_000);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await gw?.stop();
});

describe('the running program\'s vault version in the MTConnect agent', () => {
  let running: string;
  let hash: string;

  it('a version deployed through the program service to a machine that then runs it shows its vault name and hash on the Path; a machine running a file not from the vault shows UNAVAILABLE; the document is valid', async () => {
    running = await until('a running program', () => runningProgram('VC'), (p) => p !== '');
    expect(await runningProgram('VA')).not.toBe(DEPLOYED);
    const libraryId = (await post('/api/v1/libraries', { name: 'Brackets', approvalPolicy: { mode: 'autoRelease' } })).body.id;
    const machines = Object.fromEntries((await get('/api/v1/machines?limit=100')).body.items.map((m: { id: string; machineId: string }) => [m.machineId, m.id]));
    const programId = (await post('/api/v1/programs', { libraryId, name: 'bracket-op10', controller: 'fanuc' })).body.id;
    const content = Buffer.from('%\nO4801 (BRACKET OP10)\nG90 G54\nM30\n%\n');
    hash = sha(content);
    const upload = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: content.toString('base64'), notes: 'op 10' });
    const version = (await post(`/api/v1/versions/${upload.body.id}/submit`)).body.version;
    expect(version.state).toBe('published');
    // VA runs what it is given; VB gets the version renumbered (other bytes, the same version) under a name it does not run; VC gets the file it runs.
    const assignments = await Promise.all([
      post('/api/v1/machine-assignments', { programId, machineId: machines.VA, dir: DIR, transform: { fileName: DEPLOYED } }),
      post('/api/v1/machine-assignments', { programId, machineId: machines.VB, dir: DIR, transform: { programNumber: 9876 } }),
      post('/api/v1/machine-assignments', { programId, machineId: machines.VC, dir: DIR, transform: { fileName: running } }),
    ]);
    expect(assignments.map((a) => a.status)).toEqual([201, 201, 201]);
    const batch = await post('/api/v1/deployments', { versionId: version.id, assignmentIds: assignments.map((a) => a.body.id), isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const done = await Promise.all((batch.body.deployments as { id: string }[]).map((d) => settle(d.id)));
    expect(done.map((d) => [d.status, d.sha256 === hash])).toEqual([['Succeeded', true], ['Succeeded', false], ['Succeeded', true]]);
    // The renumbered file is still the vault's version: its row names the version's hash, not the bytes'.
    await gw.gateway.context.history.flush();
    const kept = await gw.request('GET', `/api/history/machine?machineID=VB&type=ProgramVersion&start=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    expect((kept.body.data as { data: { data: unknown }[] }).data.map((r) => r.data)).toEqual([{ dir: DIR, name: 'O9876', program: 'bracket-op10', version: 1, sha256: hash }]);
    expect([await runningProgram('VA'), await runningProgram('VC')]).toEqual([DEPLOYED, running]);
    expect(await runningProgram('VB')).not.toBe('O9876');

    const vaultOn = (id: string, v: Record<string, string>) => [v[`${id}_vault_program`], v[`${id}_vault_hash`]];
    const { xml, values } = await until('the vault version on VA\'s and VC\'s Paths', pathNow, (p) => p.values.VA_vault_program === 'bracket-op10' && p.values.VC_vault_program === 'bracket-op10');
    expect([values.VA_program, values.VC_program]).toEqual([DEPLOYED, running]);
    expect([vaultOn('VA', values), vaultOn('VB', values), vaultOn('VC', values)]).toEqual([['bracket-op10', hash], ['UNAVAILABLE', 'UNAVAILABLE'], ['bracket-op10', hash]]);
    const elements = Object.fromEntries(observationsOf(xml).map((o) => [o.id, o.element]));
    expect([elements.VA_vault_program, elements.VA_vault_hash]).toEqual(['ProgramHeader', 'ProgramComment']);
    expect(await schemaErrors('Streams', xml)).toEqual([]);
    const url = gw.gateway.context.services.get('mtconnect-agent').url;
    const probe = await (await fetch(`${url}/VA/probe`)).text();
    expect(probe).toMatch(/<DataItem [^>]*id="VA_vault_program"[^>]*type="PROGRAM_HEADER"/);
    expect(probe).toMatch(/<DataItem [^>]*id="VA_vault_hash"[^>]*type="PROGRAM_COMMENT"/);
    expect(await schemaErrors('Devices', probe)).toEqual([]);
  }, 90_000);

  it('survives a gateway restart: the restarted gateway serves the same vault version while the machine runs the file, and the observation made before it keeps its sequence number', async () => {
    const before = observationsOf((await pathNow()).xml).find((o) => o.id === 'VC_vault_hash');
    expect(before?.value).toBe(hash);
    await svc.stop();
    await gw.stop();
    const restarted = Date.now();
    gw = await startGateway();
    expect(await until('the same program running', () => runningProgram('VC'), (p) => p !== '')).toBe(running);
    const stateRowsSince = (machineID: string) =>
      gw.gateway.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM history WHERE machine_id = ? AND class = 'State' AND ts >= ?", [machineID, restarted]);
    await until('State rows after the restart', () => Promise.all(['VA', 'VC'].map(async (id) => (await stateRowsSince(id))?.n ?? 0)), (n) => n.every((c) => c > 0));
    const after = await until('the machines current again', pathNow, (p) => p.values.VC_program === running && ![undefined, 'UNAVAILABLE', DEPLOYED].includes(p.values.VA_program));
    expect(after.values.VC_vault_hash).toBe(hash);
    expect(after.values.VC_vault_program).toBe('bracket-op10');
    // VA's simulator lost the file with the restart and runs its schedule's program: not the vault's.
    expect(after.values.VA_program).not.toBe(DEPLOYED);
    expect([after.values.VA_vault_program, after.values.VA_vault_hash]).toEqual(['UNAVAILABLE', 'UNAVAILABLE']);
    const url = gw.gateway.context.services.get('mtconnect-agent').url;
    const past = await (await fetch(`${url}/VC/sample?from=${before?.seq}&count=1&path=${encodeURIComponent('//DataItem[@type="PROGRAM_COMMENT"]')}`)).text();
    expect(observationsOf(past).map((o) => [o.seq, o.value])).toEqual([[before?.seq, hash]]);
  }, 90_000);

  it('the same file written again without a vault version (an upload through the gateway\'s API) is no vault version: UNAVAILABLE, in /current and in a /sample read from before it', async () => {
    const from = headerOf((await pathNow()).xml).nextSequence;
    const up = await gw.request('POST', '/api/file/program/upload', { machineID: 'VC', dir: DIR, name: running, content: `%\n${running} (EDITED)\nM30\n%\n` });
    expect(up.body.errorCode).toBe(0);
    const { xml, values } = await until('the vault version gone', pathNow, (p) => p.values.VC_vault_program === 'UNAVAILABLE' && p.values.VC_program === running);
    expect(values.VC_vault_hash).toBe('UNAVAILABLE');
    // A page read afresh from before the upload rebuilds VC's state from the history (the file's last ProgramVersion row among it), so the upload's row is a change.
    const url = gw.gateway.context.services.get('mtconnect-agent').url;
    const path = encodeURIComponent('//DataItem[@type="PROGRAM_HEADER"]|//DataItem[@type="PROGRAM_COMMENT"]');
    const page = await (await fetch(`${url}/VC/sample?from=${from}&count=10&path=${path}`)).text();
    expect(observationsOf(page).map((o) => [o.id, o.value])).toEqual([['VC_vault_program', 'UNAVAILABLE'], ['VC_vault_hash', 'UNAVAILABLE']]);
    expect(await schemaErrors('Streams', xml)).toEqual([]);
  }, 60_000);

  it('a replay started at any position reads, per machine, the last ProgramVersion row of each file name written before it, oldest first', async () => {
    const ctx = gw.gateway.context;
    const pv = (name: string, version?: number) => ({ machineID: 'VB', cls: 'ProgramVersion', ts: Date.now(), data: { dir: DIR, name, ...(version ? { program: 'flange', version, sha256: String(version).repeat(64) } : {}) } });
    const seqs = [pv('X1', 1), pv('X2', 1), pv('X1', 2), pv('X3', 4), pv('X3')].map((row) => ctx.history.push(row));
    const later = ctx.history.push(pv('X2', 9));
    await ctx.history.flush();
    const rows = (await new GatewayReader(ctx).programVersionRowsBefore(['VB', 'VA'], later, Date.now() + 1000)).get('VB') ?? [];
    const mine = rows.filter((r) => /^X\d$/.test(String((JSON.parse(r.data) as { name: string }).name)));
    expect(mine.map((r) => [r.seq, JSON.parse(r.data)])).toEqual([
      [seqs[1], { dir: DIR, name: 'X2', program: 'flange', version: 1, sha256: '1'.repeat(64) }],
      [seqs[2], { dir: DIR, name: 'X1', program: 'flange', version: 2, sha256: '2'.repeat(64) }],
      [seqs[4], { dir: DIR, name: 'X3' }],
    ]);
  });
});
