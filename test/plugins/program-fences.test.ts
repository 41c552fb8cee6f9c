/**
 * Program transfers one at a time per machine file, and fenced
 * (plugins/gateway-api/program-fences.ts), against a gateway of scripted
 * machines whose uploads take a while and are counted where they arrive.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgramFences } from '../../plugins/gateway-api/program-fences.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
type Answer = { status: number; body: { errorCode: number; errorMsg: string; data?: Record<string, unknown> } };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ machines: ['FN-1', 'FN-2'].map(scriptedMachineConfig) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
});
afterAll(() => gw?.stop());

const upload = (body: Record<string, unknown>) => gw.request('POST', '/api/file/program/upload', body) as Promise<Answer>;
const download = (query: string) => gw.request('GET', `/api/file/program/download?${query}`) as Promise<Answer>;

describe('program transfers of one machine file', () => {
  it('a download waits for the upload of the same file under way, and reads the file whole', async () => {
    const m = scriptedMachine('FN-1');
    m.uploadDelayMs = 300;
    try {
      const uploading = upload({ machineID: 'FN-1', dir: DIR, name: 'O5001', content: '%\nO5001 (NEW)\nM30\n%\n' });
      // Sent once the upload has begun at the machine: without waiting, it would find no file.
      while (m.uploadsInFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
      const read = await download(`machineID=FN-1&dir=${encodeURIComponent(DIR)}&name=O5001&text=false`);
      expect((await uploading).body.errorCode).toBe(0);
      expect(read.body).toMatchObject({ errorCode: 0, data: { sha256: sha('%\nO5001 (NEW)\nM30\n%\n') } });
    } finally {
      m.uploadDelayMs = 0;
    }
  });

  it('an upload waiting for its turn at the file is refused once a newer epoch of its lease is announced, and never reaches the machine', async () => {
    const m = scriptedMachine('FN-2');
    m.uploadDelayMs = 300;
    try {
      const before = m.uploads;
      const first = upload({ machineID: 'FN-2', dir: DIR, name: 'O5002', content: '%\nFIRST\n%\n', fenceLease: 'dep_q', fenceEpoch: 1 });
      while (m.uploadsInFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
      const queued = upload({ machineID: 'FN-2', dir: DIR, name: 'O5002', content: '%\nSTALE\n%\n', fenceLease: 'dep_q', fenceEpoch: 1 });
      const announced = await gw.request('POST', '/api/file/program/fences', { fences: [{ machineID: 'FN-2', dir: DIR, name: 'O5002', fenceLease: 'dep_q', fenceEpoch: 2 }] }) as Answer;
      expect(announced.body.data).toEqual({ fences: [{ machineID: 'FN-2', dir: DIR, name: 'O5002', fenceLease: 'dep_q', fenceEpoch: 2, superseded: false, highestEpoch: 2 }] });
      expect((await first).body.errorCode).toBe(0);
      const refused = await queued;
      expect(refused.status).toBe(409);
      expect(refused.body.errorCode).toBe(2006);
      expect(refused.body.errorMsg).toContain("fenceEpoch 1 of lease 'dep_q'");
      expect(m.uploads - before).toBe(1);
      expect(m.files.get(`${DIR}O5002`)?.toString()).toBe('%\nFIRST\n%\n');
    } finally {
      m.uploadDelayMs = 0;
    }
  });

  it('GW-95 half a fencing token is refused naming the field missing; the fences of an unknown machine are 10003; more than 500 at once are refused', async () => {
    const half = await upload({ machineID: 'FN-1', dir: DIR, name: 'O5003', content: 'x', fenceLease: 'dep_h' });
    expect(half.status).toBe(400);
    expect(half.body.errorMsg).toContain('fenceEpoch');
    const halfRead = await download(`machineID=FN-1&dir=${encodeURIComponent(DIR)}&name=O5003&fenceEpoch=3`);
    expect(halfRead.status).toBe(400);
    expect(halfRead.body.errorMsg).toContain('fenceLease');
    const notANumber = await download(`machineID=FN-1&dir=${encodeURIComponent(DIR)}&name=O5003&fenceLease=dep_h&fenceEpoch=soon`);
    expect(notANumber.status).toBe(400);
    expect(notANumber.body.errorMsg).toContain('fenceEpoch');
    const unknown = await gw.request('POST', '/api/file/program/fences', { fences: [{ machineID: 'NOPE', dir: DIR, name: 'O1', fenceLease: 'd', fenceEpoch: 1 }] }) as Answer;
    expect(unknown.body.errorCode).toBe(10003);
    const many = Array.from({ length: 501 }, (_, i) => ({ machineID: 'FN-1', dir: DIR, name: `O${i}`, fenceLease: 'd', fenceEpoch: 1 }));
    const tooMany = await gw.request('POST', '/api/file/program/fences', { fences: many }) as Answer;
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errorMsg).toContain('fences');
  });
});

describe('the epochs a gateway keeps', () => {
  it('are bounded: the file and lease seen least recently is forgotten first', () => {
    const fences = new ProgramFences(2);
    const file = (name: string) => ({ machineID: 'M', dir: DIR, name });
    fences.check(file('A'), { lease: 'l', epoch: 5 });
    fences.check(file('B'), { lease: 'l', epoch: 5 });
    // Seen again: A is now the most recent, B the least.
    fences.check(file('A'), { lease: 'l', epoch: 5 });
    fences.check(file('C'), { lease: 'l', epoch: 5 });
    expect(() => fences.check(file('A'), { lease: 'l', epoch: 4 })).toThrow(/epoch 5 has been seen since/);
    expect(() => fences.check(file('C'), { lease: 'l', epoch: 4 })).toThrow(/epoch 5 has been seen since/);
    // B was forgotten.
    expect(() => fences.check(file('B'), { lease: 'l', epoch: 4 })).not.toThrow();
  });
});
