/**
 * Programs over OPC UA file transfer, against the OPC UA simulator: the
 * program directory is a FileDirectoryType object under the machine, each
 * program a FileType object, and the bytes go through Open/Read/Write/Close
 * in pieces bounded by the server's MaxByteStringLength.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OpcuaClient } from '../../../drivers/opcua/index.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../../drivers/opcua/simulator.js';
import { SIMULATOR_NS } from '../../../drivers/opcua/simulator-space.js';
import { startTestGateway } from '../../fixtures/gateway.js';
import { tapeProgram } from '../../fixtures/tape-program.js';
import { MILL, opcuaClient, rejection } from './helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'opcua-programs-test-'));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** The FANUC machine's program directory, as the simulator's machine entry names it. */
const DIR = '//CNC_MEM/USER/PATH1/';
/** The simulator's MaxByteStringLength in this file: a 1 MiB program needs 64 pieces each way. */
const MAX_BYTE_STRING = 16_384;

let sim: RunningOpcuaSimulator;
let bare: RunningOpcuaSimulator;
const open: OpcuaClient[] = [];

async function connected(port: number, options: Record<string, unknown> = {}): Promise<OpcuaClient> {
  // The first connect creates the client certificate, which takes seconds on a busy host.
  const c = opcuaClient(port, dataDir, { machine: MILL.machineID, connectTimeoutMs: 20_000, requestTimeoutMs: 5_000, ...options });
  open.push(c);
  await c.connect();
  return c;
}

/** The machine entry's options for MILL: the program directory's name included. */
const entryOptions = (s: RunningOpcuaSimulator) => (s.machineConfig(MILL) as { driverOptions: Record<string, unknown> }).driverOptions;

beforeAll(async () => {
  [sim, bare] = await Promise.all([
    startOpcuaServer({ machines: [MILL], securityModes: ['None'], runsLastProgram: true, maxByteStringLength: MAX_BYTE_STRING }),
    startOpcuaServer({ machines: [MILL], securityModes: ['None'], programDirectory: false }),
  ]);
}, 30_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await Promise.all([sim?.close(), bare?.close()]);
});

describe('opcua program transfer through FileType', () => {
  it('the machine entry names the directory as the controller does, and the driver lists its programs with their sizes', { timeout: 30_000 }, async () => {
    expect(entryOptions(sim).programDir).toBe(DIR);
    const c = await connected(sim.port, entryOptions(sim));
    expect([...c.families]).toEqual(expect.arrayContaining(['programFiles', 'programList', 'currentProgram']));
    const model = sim.machine(MILL.machineID);
    const expected = model.programList().map((p) => ({ dir: DIR, name: p.name, size: p.size }));
    expect(await c.read('programList')).toEqual(expected);
    const first = expected[0]!;
    expect((await c.downloadProgram(DIR, first.name)).equals(model.download(DIR, first.name)!)).toBe(true);
  });

  it('a Windows-1252 CRLF tape program goes to the machine and back byte for byte: same SHA-256, the same bytes in the machine\'s memory', async () => {
    const c = await connected(sim.port, entryOptions(sim));
    const content = tapeProgram('O4801');
    await c.uploadProgram(DIR, 'O4801', content);
    const back = await c.downloadProgram(DIR, 'O4801');
    expect(sha(back)).toBe(sha(content));
    expect(back.toString('hex')).toBe(content.toString('hex'));
    expect(sim.machine(MILL.machineID).download(DIR, 'O4801')?.toString('hex')).toBe(content.toString('hex'));
    expect((await c.read('programList')).find((p) => p.name === 'O4801')).toEqual({ dir: DIR, name: 'O4801', size: content.length });
  });

  it('a 1 MiB program travels in pieces no longer than the server\'s MaxByteStringLength, both ways, and arrives whole', async () => {
    const c = await connected(sim.port, entryOptions(sim));
    const content = randomBytes(1024 * 1024);
    const before = sim.transfers(MILL.machineID)!;
    await c.uploadProgram(DIR, 'BIG.MPF', content);
    const back = await c.downloadProgram(DIR, 'BIG.MPF');
    expect(sha(back)).toBe(sha(content));
    const after = sim.transfers(MILL.machineID)!;
    expect(after.writes - before.writes).toBe(content.length / MAX_BYTE_STRING);
    expect(after.reads - before.reads).toBe(content.length / MAX_BYTE_STRING);
    expect([after.largestWrite, after.largestRead]).toEqual([MAX_BYTE_STRING, MAX_BYTE_STRING]);
    expect(after.closed - before.closed).toBe(2);
  });

  it('transferChunkBytes makes the pieces smaller than the server allows', async () => {
    const c = await connected(sim.port, { ...entryOptions(sim), transferChunkBytes: 1_000 });
    const content = randomBytes(10_500);
    const before = sim.transfers(MILL.machineID)!;
    await c.uploadProgram(DIR, 'SMALL.MPF', content);
    expect((await c.downloadProgram(DIR, 'SMALL.MPF')).equals(content)).toBe(true);
    const after = sim.transfers(MILL.machineID)!;
    expect([after.writes - before.writes, after.reads - before.reads]).toEqual([11, 11]);
  });

  it('writing an existing program replaces it whole, a shorter one included', async () => {
    const c = await connected(sim.port, entryOptions(sim));
    await c.uploadProgram(DIR, 'O4802', tapeProgram('O4802', { diameter: 125 }));
    const shorter = Buffer.from('%\r\nO4802\r\nM30\r\n%\r\n', 'latin1');
    await c.uploadProgram(DIR, 'O4802', shorter);
    expect((await c.downloadProgram(DIR, 'O4802')).toString('hex')).toBe(shorter.toString('hex'));
    expect((await c.read('programList')).filter((p) => p.name === 'O4802')).toHaveLength(1);
  });

  it('the current program is the one ActiveProgram names, read from the directory byte for byte', async () => {
    const c = await connected(sim.port, entryOptions(sim));
    const content = tapeProgram('O4803');
    await c.uploadProgram(DIR, 'O4803', content);
    // The simulator runs what it was last given; its ActiveProgram/Name follows within one refresh.
    await expect.poll(async () => (await c.read('currentProgram')).name, { timeout: 3_000 }).toBe('O4803');
    const current = await c.read('currentProgram');
    expect(current).toMatchObject({ dir: DIR, name: 'O4803' });
    expect(current.content.toString('hex')).toBe(content.toString('hex'));
  });

  it('names the directory it serves when asked for another, and a program that is not there', async () => {
    const c = await connected(sim.port, entryOptions(sim));
    const wrongDir = await rejection(c.uploadProgram('//CNC_MEM/USER/PATH2/', 'O1', Buffer.from('%\n%\n')));
    expect(wrongDir.errorName).toBe('INVALID_PARAMETER');
    expect(wrongDir.message).toContain(`dir must be ${DIR}`);
    const missing = await rejection(c.downloadProgram(DIR, 'O9999'));
    expect(missing.errorName).toBe('PROGRAM_NOT_FOUND');
    expect(missing.message).toContain(`opcua: no program 'O9999' in '${DIR}'`);
  });

  it('programDirectory points at the directory by NodeId; without programDir it is named after its BrowseName', async () => {
    const c = await connected(sim.port, { programDirectory: `nsu=${SIMULATOR_NS};s=${MILL.machineID}.Programs` });
    const content = tapeProgram('O4804');
    await c.uploadProgram('/Programs/', 'O4804', content);
    expect((await c.downloadProgram('/Programs', 'O4804')).equals(content)).toBe(true);
    expect(sim.machine(MILL.machineID).download(DIR, 'O4804')?.equals(content)).toBe(true);
  });
});

describe('opcua servers without a program directory', () => {
  it('refuses programs up front, saying why, and still reads the machine', async () => {
    const c = await connected(bare.port, entryOptions(bare));
    expect(entryOptions(bare)).not.toHaveProperty('programDir');
    for (const family of ['programFiles', 'programList', 'currentProgram'] as const) expect(c.families.has(family)).toBe(false);
    const refused = await rejection(c.uploadProgram(DIR, 'O1', tapeProgram('O1')));
    expect(refused.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(refused.message).toContain(`driver 'opcua' does not support item family 'programFiles': machine '${MILL.machineID}' has no program directory (a FileDirectoryType object) on this server, and driverOptions.programDirectory names none`);
    expect((await rejection(c.downloadProgram(DIR, 'O1'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect((await rejection(c.read('programList'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect((await c.read('status')).cncStatus).toMatch(/Active|Interrupted|Reset/);
  });

  it('a programDirectory that is not a FileDirectoryType leaves programs refused with that reason, and the machine connected', async () => {
    const c = await connected(sim.port, { programDirectory: `nsu=${SIMULATOR_NS};s=${MILL.machineID}.Production` });
    expect(c.families.has('programFiles')).toBe(false);
    const refused = await rejection(c.downloadProgram('/Programs/', 'O1'));
    expect(refused.message).toContain(`driverOptions.programDirectory (nsu=${SIMULATOR_NS};s=${MILL.machineID}.Production) is not a FileDirectoryType object on this server`);
  });

  it('the gateway says before any transfer which machine takes programs: the one with a directory every byte, the one without none', { timeout: 60_000 }, async () => {
    const entry = (server: RunningOpcuaSimulator, machineID: string) => {
      const config = server.machineConfig(MILL) as { driverOptions: Record<string, unknown> };
      return {
        ...config, machineID, driverOptions: { ...config.driverOptions, connectTimeoutMs: 20_000, requestTimeoutMs: 5_000 },
        tasks: { CNCStatus: { enabled: true, intervalMs: 200 } }, connection: { connectTimeoutMs: 25_000 },
      };
    };
    const tg = await startTestGateway({ machines: [entry(sim, 'UA-FILES'), entry(bare, 'UA-BARE')] });
    try {
      await expect.poll(() => ['UA-FILES', 'UA-BARE'].map((id) => tg.gateway.fleet.connectionState(id)), { timeout: 40_000, interval: 100 }).toEqual(['online', 'online']);
      const capabilities = (await tg.request('GET', '/api/file/program/capabilities')).body.data as { machines: unknown[] };
      expect(capabilities.machines).toEqual([
        { machineID: 'UA-FILES', programFiles: true, limitsKnown: true, refusedBytes: [] },
        { machineID: 'UA-BARE', programFiles: false, limitsKnown: true, refusedBytes: [], reason: 'its driver (opcua) does not transfer program files' },
      ]);
      const content = tapeProgram('O4805');
      const upload = (machineID: string) => tg.request('POST', '/api/file/program/upload', { machineID, dir: DIR, name: 'O4805', contentBase64: content.toString('base64') });
      expect((await upload('UA-FILES')).body.errorCode).toBe(0);
      expect(sim.machine(MILL.machineID).download(DIR, 'O4805')?.equals(content)).toBe(true);
      const refused = await upload('UA-BARE');
      expect(refused.body.errorCode).toBe(2001);
      expect(bare.machine(MILL.machineID).download(DIR, 'O4805')).toBeUndefined();
    } finally {
      await tg.stop();
    }
  });
});
