/**
 * Programs are bytes, from the vault to every program-capable driver's own
 * simulator and back. One scenario, run against each driver that transfers
 * program files (the simulator, FOCAS through its bridge simulator, and OPC UA
 * through the file transfer of its simulator's program directory): a
 * Windows-1252 program with CRLF line ends, a DC2 % tape header, Ø comments,
 * a DC4 and NULs after the closing % is uploaded to the vault, previewed,
 * deployed through the gateway (in-process link), read back with the same
 * SHA-256, found byte for byte in the machine's own memory, and read as the
 * running program over the gateway's HTTP read and MCP. Then what a machine
 * cannot take: a FOCAS bridge of protocol 1.0 (ASCII only) and a driver
 * without program transfer are named at once by the preview, the deployment
 * and the gateway's upload, and nothing reaches them.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { programText } from '../../core/values/program-bytes.js';
import type { SimulatedMachineSpec, RunningSimulator } from '../../drivers/protocol-simulator.js';
import { startFocasBridge } from '../../drivers/focas/simulator.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../drivers/opcua/simulator.js';
import type { SimulatorClient } from '../../drivers/simulator/index.js';
import { assignmentsPlugin } from '../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../plugins/gateways/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { webhooksPlugin } from '../../plugins/webhooks/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../fixtures/programs-accounts.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { tapeProgram } from '../fixtures/tape-program.js';
import { rawCall } from './focas/bridge-fixtures.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const spec = (machineID: string, seed: number): SimulatedMachineSpec => ({ machineID, seed, machineType: 'machiningCenter', system: 'FANUC 31i-B' });
const STATUS_TASK = { CNCStatus: { enabled: true, intervalMs: 200 } };

/** A program as a bridge's CNC holds it, read with raw protocol calls (no driver): one character per byte. */
async function onBridge(bridge: RunningSimulator, cnc: string, name: string): Promise<Buffer | undefined> {
  const call = async (fn: string, body: Record<string, unknown>) => (await rawCall(bridge.port, 'POST', `/focas/cnc/${cnc}/${fn}`, body)).body;
  const handle = Number((await call('cnc_allclibhndl3', { timeout: 5 })).handle);
  try {
    if ((await call('cnc_upstart4', { handle, type: 0, prgname: DIR + name })).rc !== 0) return undefined;
    let text = '';
    for (;;) {
      const chunk = await call('cnc_upload4', { handle, length: 4096 });
      if (!chunk.data) break;
      text += String(chunk.data);
    }
    await call('cnc_upend4', { handle });
    return Buffer.from(text, 'latin1');
  } finally {
    await call('cnc_freelibhndl', { handle });
  }
}

let gw: TestGateway;
let svc: TestProgramService;
let admin: Session;
let mcp: McpSession;
let bridge11: RunningSimulator;
let bridge10: RunningSimulator;
let opcua: RunningOpcuaSimulator;
let libraryId: string;
/** Service machine id by the gateway's machineID. */
let machines: Record<string, string>;

const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });

async function settle(ids: string[]): Promise<{ id: string; status: string; sha256: string; readBackSha256: string | null; reason: string | null }[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const rows = await Promise.all(ids.map(async (id) => (await get(`/api/v1/deployments/${id}`)).body));
    if (rows.every((r) => r.status === 'Succeeded' || r.status === 'Failed')) return rows;
    if (Date.now() > deadline) throw new Error(`not finished: ${rows.map((r) => `${r.id} ${r.status} ${r.reason ?? ''}`).join('; ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A published version of a new program `name` holding `content`, and an assignment of it to `machineID`. */
async function released(name: string, content: Buffer, machineID: string): Promise<{ versionId: string; assignmentId: string; sha256: string }> {
  const programId = (await post('/api/v1/programs', { libraryId, name, controller: 'fanuc' })).body.id;
  const upload = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: content.toString('base64'), notes: 'from the CAM post' });
  expect([upload.status, upload.body.sha256]).toEqual([201, sha(content)]);
  const version = (await post(`/api/v1/versions/${upload.body.id}/submit`)).body.version;
  expect(version.state).toBe('published');
  const assignment = await post('/api/v1/machine-assignments', { programId, machineId: machines[machineID], dir: DIR });
  expect(assignment.status).toBe(201);
  return { versionId: version.id, assignmentId: assignment.body.id, sha256: sha(content) };
}

beforeAll(async () => {
  bridge11 = await startFocasBridge({ machines: [spec('F11', 11)] });
  bridge10 = await startFocasBridge({ machines: [spec('F10', 10)], protocolVersion: '1.0' });
  opcua = await startOpcuaServer({ machines: [spec('U12', 12)], securityModes: ['None'] });
  const focas = (bridge: RunningSimulator, s: SimulatedMachineSpec) => ({ ...bridge.machineConfig(s), model: '31i-B', tasks: STATUS_TASK });
  const ua = opcua.machineConfig(spec('U12', 12)) as { driverOptions: Record<string, unknown> };
  gw = await startTestGateway({
    machines: [
      simMachine('SIM', { driverOptions: { seed: 5, machineType: 'mill', system: 'FANUC', setupRate: 0 } }),
      focas(bridge11, spec('F11', 11)),
      focas(bridge10, spec('F10', 10)),
      // The first connect creates the gateway's OPC UA client certificate, which takes seconds on a busy host.
      { ...ua, driverOptions: { ...ua.driverOptions, connectTimeoutMs: 20_000, requestTimeoutMs: 5_000 }, tasks: STATUS_TASK, connection: { connectTimeoutMs: 25_000 } },
      simMachine('NOFILES', { driverOptions: { seed: 6, machineType: 'mill', system: 'FANUC', families: ['status', 'alarm'] } }),
    ],
  });
  svc = await startTestProgramService({
    plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
    env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
    localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
  });
  admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  libraryId = (await post('/api/v1/libraries', { name: 'Tape programs', approvalPolicy: { mode: 'autoRelease' } })).body.id;
  machines = Object.fromEntries((await get('/api/v1/machines?limit=100')).body.items.map((m: { id: string; machineId: string }) => [m.machineId, m.id]));
  mcp = await connectMcp(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }), gw.adminToken);
  const deadline = Date.now() + 30_000;
  while (['SIM', 'F11', 'F10', 'NOFILES', 'U12'].some((id) => gw.gateway.fleet.connectionState(id) !== 'online')) {
    if (Date.now() > deadline) throw new Error('machines not online');
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
  await gw?.stop();
  await bridge11?.close();
  await bridge10?.close();
  await opcua?.close();
});

const DRIVERS = [
  { driver: 'simulator', machineID: 'SIM', program: 'O4701', stored: (name: string) => Promise.resolve((gw.gateway.fleet.client('SIM') as SimulatorClient).machine.download(DIR, name)) },
  { driver: 'focas', machineID: 'F11', program: 'O4702', stored: (name: string) => onBridge(bridge11, 'F11', name) },
  { driver: 'opcua', machineID: 'U12', program: 'O4707', stored: (name: string) => Promise.resolve(opcua.machine('U12').download(DIR, name)) },
];

describe.each(DRIVERS)('a Windows-1252 tape program through the $driver driver', ({ machineID, program, stored }) => {
  it('goes from the vault to the machine and back byte for byte: preview, deployment with read-back, the gateway\'s download, the machine\'s own memory', async () => {
    const content = tapeProgram(program);
    const { versionId, assignmentId, sha256 } = await released(program, content, machineID);

    const preview = await post(`/api/v1/machine-assignments/${assignmentId}/preview-transform`, { versionId });
    expect(preview.body).toMatchObject({ warnings: [], fileName: program, result: { sha256, size: content.length, encoding: 'windows-1252', text: programText(content).text } });

    const batch = await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const [done] = await settle(batch.body.deployments.map((d: { id: string }) => d.id));
    expect(done).toMatchObject({ status: 'Succeeded', sha256, readBackSha256: sha256 });

    const download = await gw.request('GET', `/api/file/program/download?machineID=${machineID}&dir=${encodeURIComponent(DIR)}&name=${program}`);
    const file = download.body.data as { contentBase64: string; content: string; encoding: string; size: number; sha256: string };
    expect(Buffer.from(file.contentBase64, 'base64').toString('hex')).toBe(content.toString('hex'));
    expect(file).toMatchObject({ sha256, size: content.length, encoding: 'windows-1252', content: programText(content).text });
    expect((await stored(program))?.toString('hex')).toBe(content.toString('hex'));
  });

  it('GW-58 read as the running program over HTTP and over MCP read_current_program: text in Windows-1252, named so, hash of the exact bytes, maxChars cuts the text', async () => {
    // The running program's file is replaced by the tape program (under its own name); it is read at once, so it is still the running one.
    let running = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      running = ((await gw.request('GET', `/api/cnc/readCurrentProgram?machineID=${machineID}`)).body.data as { name: string }).name;
      const bytes = tapeProgram(running);
      const up = await gw.request('POST', '/api/file/program/upload', { machineID, dir: DIR, name: running, contentBase64: bytes.toString('base64') });
      expect(up.body.errorCode).toBe(0);
      const http = (await gw.request('GET', `/api/cnc/readCurrentProgram?machineID=${machineID}`)).body.data as Record<string, unknown>;
      if (http.name !== running) continue;
      expect(http).toMatchObject({ dir: DIR, content: programText(bytes).text, encoding: 'windows-1252', contentBase64: bytes.toString('base64'), size: bytes.length, sha256: sha(bytes) });
      const full = (await mcp.call('read_current_program', { machineID, maxChars: 0 })).json() as Record<string, unknown>;
      if (full.name !== running) continue;
      const text = programText(bytes).text;
      expect(text).toContain('(Ø 25 SCHAFTFRÄSER)');
      expect(text).toContain('(WERKZEUG T01 – 25 MM € 12,50)');
      expect(full).toMatchObject({ dir: DIR, content: text, encoding: 'windows-1252', size: bytes.length, sha256: sha(bytes), truncated: false, totalChars: text.length });
      expect(full).not.toHaveProperty('contentBase64');
      const cut = (await mcp.call('read_current_program', { machineID, maxChars: 20 })).json() as Record<string, unknown>;
      expect(cut).toMatchObject({ content: text.slice(0, 20), truncated: true, totalChars: text.length });
      return;
    }
    throw new Error(`the running program kept changing (last ${running})`);
  });
});

describe('a machine that cannot take a program is named at once, before anything is sent', () => {
  it('a FOCAS bridge of protocol 1.0 carries ASCII only: the gateway says so, the preview warns, the deployment is refused naming the byte, the upload is refused, nothing reaches the CNC', async () => {
    const capability = await gw.request('GET', '/api/file/program/capabilities?machineID=F10');
    expect(capability.body.data).toEqual({
      machines: [{ machineID: 'F10', programFiles: true, limitsKnown: true, refusedBytes: [{ from: 0x80, to: 0xff }], reason: expect.stringMatching(/speaks focas-bridge 1\.0, which carries program text as ASCII only .*upgrade the bridge/) }],
    });
    const content = tapeProgram('O4703');
    const { versionId, assignmentId } = await released('O4703', content, 'F10');
    const simOk = await released('O4704', tapeProgram('O4704'), 'SIM');

    const preview = await post(`/api/v1/machine-assignments/${assignmentId}/preview-transform`, { versionId });
    expect(preview.status).toBe(200);
    expect(preview.body.warnings).toEqual([
      expect.stringMatching(/^Machine .*\(F10\) cannot take this program: the program holds byte 0xD8 \('Ø' in Windows-1252\) in line 2, column 8, which it cannot take unchanged: the FOCAS bridge at 127\.0\.0\.1:\d+ speaks focas-bridge 1\.0.*A deployment to it is refused\.$/),
    ]);

    const before = (await get('/api/v1/deployments?limit=1000')).body.items.length;
    const refused = await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/^machine .*\(F10\) cannot take version 1 of O4703: the program holds byte 0xD8 \('Ø' in Windows-1252\) in line 2, column 8.*Nothing was deployed/);
    expect(refused.body.errors).toEqual([{ field: 'body.assignmentIds[0]', message: expect.stringContaining('focas-bridge 1.0') }]);
    expect((await get('/api/v1/deployments?limit=1000')).body.items.length).toBe(before);
    // Another program, another machine: its deployment is not held up.
    const other = await post('/api/v1/deployments', { versionId: simOk.versionId, assignmentIds: [simOk.assignmentId], isTrial: false, trialHours: null });
    expect(other.status).toBe(201);
    expect((await settle(other.body.deployments.map((d: { id: string }) => d.id)))[0]?.status).toBe('Succeeded');

    const upload = await gw.request('POST', '/api/file/program/upload', { machineID: 'F10', dir: DIR, name: 'O4703', contentBase64: content.toString('base64') });
    expect([upload.status, upload.body.errorCode]).toEqual([400, 2]);
    expect(upload.body.errorMsg).toMatch(/contentBase64: byte 0xD8 \('Ø' in Windows-1252\) in line 2, column 8 cannot reach machine 'F10': the FOCAS bridge at .* speaks focas-bridge 1\.0/);
    expect(await onBridge(bridge10, 'F10', 'O4703')).toBeUndefined();
    // ASCII still goes through a 1.0 bridge.
    const ascii = Buffer.from('%\r\nO4705 (PLAIN)\r\nM30\r\n%\r\n');
    expect((await gw.request('POST', '/api/file/program/upload', { machineID: 'F10', dir: DIR, name: 'O4705', contentBase64: ascii.toString('base64') })).body.errorCode).toBe(0);
    expect((await onBridge(bridge10, 'F10', 'O4705'))?.equals(ascii)).toBe(true);
  });

  it('a machine whose driver has no program transfer: the preview warns and the deployment is refused, in plain words', async () => {
    const { versionId, assignmentId } = await released('O4706', tapeProgram('O4706'), 'NOFILES');
    const preview = await post(`/api/v1/machine-assignments/${assignmentId}/preview-transform`, { versionId });
    expect(preview.body.warnings).toEqual([expect.stringMatching(/^Machine .*\(NOFILES\) cannot take this program: it cannot receive program files: its driver \(simulator\) does not transfer program files\. A deployment to it is refused\.$/)]);
    const refused = await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].message).toMatch(/NOFILES\) cannot take version 1 of O4706: it cannot receive program files/);
  });
});
