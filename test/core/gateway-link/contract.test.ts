/**
 * The gateway-link contract, run against both implementations: in-process
 * (the gateway's interface registry) and HTTP (a real gateway listening on
 * 127.0.0.1, reached with a secret key). Same scenarios, same answers.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { GatewayLinkError, type GatewayLink } from '../../../core/gateway-link/types.js';
import { linkError } from '../../../core/gateway-link/calls.js';
import { ERRORS } from '../../../core/interfaces/errors.js';
import type { SimulatorClient } from '../../../drivers/simulator/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { tapeProgram } from '../../fixtures/tape-program.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function failure(promise: Promise<unknown>): Promise<GatewayLinkError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof GatewayLinkError)) throw new Error(`expected a GatewayLinkError, got ${String(err)}`);
  return err;
}

let gw: TestGateway;
let url: string;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway({
    machines: [
      simMachine('M1'), simMachine('M2', { driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC', timeScale: 500 } }), simMachine('M3', { isActive: false }),
      simMachine('NF', { driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC', families: ['status'] } }),
    ],
    groups: [{ groupID: 'cell-a', name: 'Cell A', machineIDs: ['M1', 'M2'] }],
  });
  url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  const created = await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' });
  key = (created.body.data as { key: string }).key;
});
afterAll(() => gw.stop());

const implementations: [string, () => GatewayLink][] = [
  ['in-process', () => new InProcessGatewayLink(gw.gateway.context.interfaces)],
  ['http', () => new HttpGatewayLink(url, key)],
];

describe.each(implementations)('gateway link (%s)', (_name, make) => {
  it('PV-33 says who the gateway is: its stable gatewayID (its data directory\'s gateway-id) and its name', async () => {
    const info = await gw.request('GET', '/api/system/gateway-info');
    const { gatewayID, name } = info.body.data as { gatewayID: string; name: string };
    expect(gatewayID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await make().identity()).toEqual({ gatewayID, name });
  });

  it('PV-33 lists the gateway\'s machines, without credentials, and its groups', async () => {
    const link = make();
    const machines = await link.listMachines();
    expect(machines.map((m) => m.machineID).sort()).toEqual(['M1', 'M2', 'M3', 'NF']);
    expect(machines.find((m) => m.machineID === 'M3')?.isActive).toBe(false);
    expect(machines[0]).toMatchObject({ driver: 'simulator', system: 'FANUC' });
    expect(JSON.stringify(machines)).not.toMatch(/password/i);
    expect(await link.listGroups()).toEqual([{ groupID: 'cell-a', name: 'Cell A', isActive: true, machineIDs: ['M1', 'M2'] }]);
  });

  it('PV-33 uploads a program, lists it and reads it back with the same SHA-256', async () => {
    const link = make();
    const name = `O${_name === 'http' ? 4101 : 4102}`;
    const content = Buffer.from(`%\r\n${name} (LINK)\r\nG90 G54\r\nM30\r\n%\r\n`);
    const sent = await link.uploadProgram('M1', DIR, name, content);
    expect(sent).toEqual({ size: content.length, sha256: sha(content) });
    const back = await link.downloadProgram('M1', DIR, name);
    expect(back.sha256).toBe(sha(content));
    expect(Buffer.compare(back.content, content)).toBe(0);
    const files = await link.listPrograms('M1', DIR);
    expect(files.find((f) => f.name === name)).toMatchObject({ dir: DIR, size: content.length });
    const current = await link.currentProgram('M1');
    expect(current.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('PV-33 reads a program back by its hash: the size and SHA-256 of what the gateway read from the machine, without the bytes', async () => {
    const link = make();
    const name = `O${_name === 'http' ? 4131 : 4132}`;
    const content = tapeProgram(name);
    await link.uploadProgram('M1', DIR, name, content);
    expect(await link.programHash('M1', DIR, name)).toEqual({ size: content.length, sha256: sha(content) });
    expect(await link.programHash('M1', DIR, name, { lease: `dep_hash_${_name}`, epoch: 1 })).toEqual({ size: content.length, sha256: sha(content) });
    expect((await failure(link.programHash('M1', DIR, 'O9998'))).kind).toBe('not-found');
  });

  it('PV-33 a Windows-1252 tape program (CRLF, DC2 %, Ø comments, DC4 and NULs) goes up and comes back byte for byte, hashed by the gateway', async () => {
    const link = make();
    const name = `O${_name === 'http' ? 4111 : 4112}`;
    const content = tapeProgram(name);
    expect(await link.uploadProgram('M1', DIR, name, content)).toEqual({ size: content.length, sha256: sha(content) });
    const back = await link.downloadProgram('M1', DIR, name);
    expect(back.content.toString('hex')).toBe(content.toString('hex'));
    expect(back).toMatchObject({ size: content.length, sha256: sha(content) });
    // The running program's hash is the gateway's, of the exact bytes.
    const machine = (gw.gateway.fleet.client('M1') as SimulatorClient).machine;
    const running = (await link.currentProgram('M1')).name;
    const bytes = tapeProgram(running);
    await link.uploadProgram('M1', DIR, running, bytes);
    expect(machine.download(DIR, running)).toEqual(bytes);
    const current = await link.currentProgram('M1');
    expect(current.name === running ? current.sha256 : sha(bytes)).toBe(sha(bytes));
  });

  it('PV-33 says what each machine can take as a program file, without contacting it', async () => {
    const link = make();
    const all = await link.programCapabilities();
    expect(all.map((c) => c.machineID).sort()).toEqual(['M1', 'M2', 'NF']);
    expect(all.find((c) => c.machineID === 'M1')).toEqual({ machineID: 'M1', programFiles: true, limitsKnown: true, refusedBytes: [] });
    expect(all.find((c) => c.machineID === 'NF')).toMatchObject({ programFiles: false, reason: 'its driver (simulator) does not transfer program files' });
    expect(await link.programCapabilities('M2')).toEqual([{ machineID: 'M2', programFiles: true, limitsKnown: true, refusedBytes: [] }]);
    expect((await failure(link.programCapabilities('M3'))).kind).toBe('not-found');
  });

  it('PV-25 reads a machine\'s history rows of one class in a window, oldest first, bounded, with afterSeq to continue', async () => {
    const link = make();
    const start = Date.now() - 60_000;
    // The simulated machine (500 times real speed) changes status often; its actor records a CNCStatus row at each change.
    let all: Awaited<ReturnType<GatewayLink['history']>> = { rows: [], limitReached: false };
    for (let i = 0; i < 100 && all.rows.length < 2; i++) {
      all = await link.history('M2', 'CNCStatus', start, Date.now() + 1000, 0);
      if (all.rows.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(all.rows.length).toBeGreaterThanOrEqual(2);
    expect(all.rows[0]?.time).toBeGreaterThanOrEqual(start);
    expect(typeof all.rows[0]?.data.adjustedStatus).toBe('string');
    const first = await link.history('M2', 'CNCStatus', start, Date.now() + 1000, 1);
    expect(first.rows).toHaveLength(1);
    expect(first.limitReached).toBe(true);
    const next = await link.history('M2', 'CNCStatus', start, Date.now() + 1000, 1, first.rows[0]?.seq);
    expect(next.rows[0]?.seq).toBeGreaterThan(first.rows[0]?.seq ?? Infinity);
    const err = await failure(link.history('M1', 'NoSuchClass', start, Date.now(), 1));
    expect(err.kind).toBe('rejected');
  });

  it('the gateway refuses a transfer under a fencing epoch older than one it has seen for the machine file and lease (superseded, errorCode 2006), upload and download alike', async () => {
    const link = make();
    const name = `O${_name === 'http' ? 4121 : 4122}`;
    const content = Buffer.from(`%\n${name} (FENCED)\nM30\n%\n`);
    const lease = `dep_fenced_${_name}`;
    expect(await link.uploadProgram('M1', DIR, name, content, { lease, epoch: 2 })).toEqual({ size: content.length, sha256: sha(content) });
    const stale = await failure(link.uploadProgram('M1', DIR, name, Buffer.from('%\nOLD\n%\n'), { lease, epoch: 1 }));
    expect(stale).toMatchObject({ kind: 'superseded', errorCode: ERRORS.PROGRAM_TRANSFER_SUPERSEDED.code, transient: false });
    expect(stale.message).toContain('epoch 2 has been seen since');
    expect((await failure(link.downloadProgram('M1', DIR, name, { lease, epoch: 1 }))).kind).toBe('superseded');
    // The one refused never reached the machine.
    expect((await link.downloadProgram('M1', DIR, name, { lease, epoch: 2 })).sha256).toBe(sha(content));
    // A new holder announces its epoch before any transfer: the former one is refused from then on.
    expect(await link.announceFences([{ machineID: 'M1', dir: DIR, name, fence: { lease, epoch: 3 } }, { machineID: 'M1', dir: DIR, name, fence: { lease, epoch: 1 } }]))
      .toEqual([{ superseded: false, highestEpoch: 3 }, { superseded: true, highestEpoch: 3 }]);
    expect((await failure(link.uploadProgram('M1', DIR, name, content, { lease, epoch: 2 }))).kind).toBe('superseded');
    // Another lease of the same file counts on its own, and a caller without a token is not fenced.
    expect((await link.uploadProgram('M1', DIR, name, content, { lease: `${lease}_other`, epoch: 1 })).sha256).toBe(sha(content));
    expect((await link.uploadProgram('M1', DIR, name, content)).sha256).toBe(sha(content));
    expect((await link.uploadProgram('M1', DIR, name, content, { lease, epoch: 3 })).sha256).toBe(sha(content));
  });

  it('PV-33 an upload names the vault version it writes: the gateway keeps it for the file once written, not for an upload refused as superseded, and an upload naming none says the file is no version any more', async () => {
    const link = make();
    const name = `O${_name === 'http' ? 4151 : 4152}`;
    const content = Buffer.from(`%\n${name} (VAULT)\nM30\n%\n`);
    const lease = `dep_vault_${_name}`;
    const start = Date.now() - 1000;
    const vault = { program: `bracket-${_name}`, version: 3, sha256: sha(content) };
    expect(await link.uploadProgram('M1', DIR, name, content, { lease, epoch: 2 }, vault)).toEqual({ size: content.length, sha256: sha(content) });
    const stale = { program: `bracket-${_name}`, version: 2, sha256: sha(Buffer.from('old')) };
    expect((await failure(link.uploadProgram('M1', DIR, name, Buffer.from('%\nOLD\n%\n'), { lease, epoch: 1 }, stale))).kind).toBe('superseded');
    expect((await link.uploadProgram('M1', DIR, name, content)).sha256).toBe(sha(content));
    await gw.gateway.context.history.flush();
    const rows = (await link.history('M1', 'ProgramVersion', start, Date.now() + 1000, 100)).rows.map((r) => r.data).filter((d) => d.name === name);
    expect(rows).toEqual([{ dir: DIR, name, ...vault }, { dir: DIR, name }]);
    const refused = await failure(link.uploadProgram('M1', DIR, name, content, undefined, { program: 'x', version: 0, sha256: 'abc' }));
    expect(refused.kind).toBe('rejected');
    expect(refused.message).toMatch(/vault\.version/);
  });

  it('PV-33 maps the gateway\'s errors to what a caller can do: not-found, rejected', async () => {
    const link = make();
    expect((await failure(link.listPrograms('NOPE'))).kind).toBe('not-found');
    const bad = await failure(link.uploadProgram('M1', DIR, '../escape', Buffer.from('x')));
    expect(bad.kind).toBe('rejected');
    expect(bad.transient).toBe(false);
    const missing = await failure(link.downloadProgram('M1', DIR, 'O9999'));
    expect(missing.kind).toBe('not-found');
    // The gateway answers an inactive machine as one that does not exist (GW-94).
    expect((await failure(link.listPrograms('M3'))).kind).toBe('not-found');
  });
});

describe('gateway link in the process only', () => {
  it('PV-33 hands program bytes over as they are, both ways: no base64 between the service and its own gateway', async () => {
    const link = new InProcessGatewayLink(gw.gateway.context.interfaces);
    const content = tapeProgram('O4121');
    const client = gw.gateway.fleet.client('M1');
    const upload = vi.spyOn(client, 'uploadProgram');
    const download = vi.spyOn(client, 'downloadProgram');
    try {
      await link.uploadProgram('M1', DIR, 'O4121', content);
      expect(upload.mock.calls[0]?.[2]).toBe(content);
      const back = await link.downloadProgram('M1', DIR, 'O4121');
      expect(back.content).toBe(await download.mock.results[0]?.value);
    } finally {
      upload.mockRestore();
      download.mockRestore();
    }
  });
});

describe('gateway link over HTTP only', () => {
  it('PV-33 a wrong key is unauthorized; a gateway that does not answer is unreachable (transient); no key appears in an error', async () => {
    const wrong = await failure(new HttpGatewayLink(url, 'gwk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').listMachines());
    expect(wrong.kind).toBe('unauthorized');
    expect(wrong.message).not.toContain('gwk_');
    const down = await failure(new HttpGatewayLink('http://127.0.0.1:9', key, { timeoutMs: 2000 }).listMachines());
    expect(down.kind).toBe('unreachable');
    expect(down.transient).toBe(true);
    expect(down.message).not.toContain(key);
  });

  it('reads no more than its bound of an answer', async () => {
    const small = await failure(new HttpGatewayLink(url, key, { maxResponseBytes: 64 }).listMachines());
    expect(small.message).toMatch(/at most 64|more than 64/);
  });
});

describe('gateway link errors', () => {
  it('classify every code of the gateway\'s error table, and only a timeout, an offline machine or a stopping gateway is transient', () => {
    const kinds = Object.fromEntries(Object.entries(ERRORS).filter(([, e]) => e.code !== 0).map(([name, e]) => [name, linkError(e.code, 'x').kind]));
    expect(kinds).toMatchObject({
      INVALID_PARAMETER: 'rejected', UNAUTHORIZED: 'unauthorized', FORBIDDEN: 'unauthorized', IP_NOT_IN_WHITE_LIST: 'unauthorized',
      NOT_FOUND: 'not-found', PROGRAM_NOT_FOUND: 'not-found', GENERAL_MACHINE_ID_NOT_EXISTED: 'not-found', PROGRAM_TRANSFER_SUPERSEDED: 'superseded',
      DRIVER_FAMILY_UNSUPPORTED: 'unsupported', MACHINE_NOT_CONNECTED: 'machine-unavailable', DRIVER_TIMEOUT: 'machine-unavailable',
      SERVICE_STOPPING: 'unreachable', GATEWAY_SERVICE_UNAVAILABLE: 'unreachable', UNKNOWN_ERROR: 'failed',
    });
    const transient = Object.entries(ERRORS).filter(([, e]) => e.code !== 0 && linkError(e.code, 'x').transient).map(([name]) => name).sort();
    expect(transient).toEqual(['DRIVER_TIMEOUT', 'GATEWAY_SERVICE_UNAVAILABLE', 'MACHINE_INACTIVE', 'MACHINE_NOT_CONNECTED', 'SERVICE_STOPPING', 'TOO_MANY_REQUESTS']);
    expect(linkError(2, 'y'.repeat(5000)).message.length).toBeLessThan(400);
  });
});
