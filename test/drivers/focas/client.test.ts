import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import { startFocasBridge } from '../../../drivers/focas/simulator.js';
import { SimulatedCnc } from '../../../drivers/focas/simulated-cnc.js';
import { focasOptionsSchema, type FocasClient } from '../../../drivers/focas/index.js';
import { fromBridgeText } from '../../../drivers/focas/program-data.js';
import { callPath } from '../../../drivers/focas/protocol.js';
import { tapeProgram } from '../../fixtures/tape-program.js';
import { LATHE, MC, T0, focasClient, rawCall, rejection, startSilentBridge } from './bridge-fixtures.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const clock = { now: T0 };
const now = () => clock.now;
let sim: RunningSimulator;
/** The same machine as the bridge's MC-01: same spec, same clock, so the same readings. */
let reference: SimulatedCnc;
const clients: FocasClient[] = [];

async function connected(options: Parameters<typeof focasClient>[1] = { cnc: MC.machineID }, port = sim.port): Promise<FocasClient> {
  const client = focasClient(port, options, now);
  clients.push(client);
  await client.connect();
  return client;
}

beforeAll(async () => {
  clock.now = T0;
  sim = await startFocasBridge({ machines: [MC, LATHE], now, missingOptions: { [LATHE.machineID]: ['cnc_rdtlinfo'] } });
  reference = new SimulatedCnc(MC, now);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(() => sim.close());

describe('focas driver against the bridge simulator: families', () => {
  it('status and alarms follow the machine through a simulated day', async () => {
    const client = await connected();
    const m = reference.machine;
    const seen = new Set<string>();
    for (let step = 0; step < 120; step++) {
      clock.now = T0 + step * 12 * 60_000;
      const status = await client.read('status');
      expect(status).toEqual({ ...m.status(), time: clock.now });
      seen.add(status.adjustedStatus);
      const alarms = await client.read('alarm');
      const expected = m.alarms().map((a) => ({ code: a.level === 'warning' ? a.code.replace(/^\D+/, '') : a.code, message: a.message, level: a.level }));
      expect(alarms.map(({ code, message, level }) => ({ code, message, level }))).toEqual(expected);
    }
    expect(seen.has('RUNNING')).toBe(true);
    expect(seen.size).toBeGreaterThan(1);
  });

  it('position, load, feedAndSpindle, timeData and count equal the machine model', async () => {
    const client = await connected();
    const m = reference.machine;
    for (const at of [0, 3_600_000, 7_777_000]) {
      clock.now = T0 + at;
      expect(await client.read('position')).toEqual(m.positions());
      expect(await client.read('load')).toEqual(m.loads());
      expect(await client.read('feedAndSpindle')).toEqual(m.feedAndSpindle());
      const td = m.timeData();
      expect(await client.read('timeData')).toEqual({ ...td, powerOnTime: Math.floor(td.powerOnTime / 60) * 60 });
      const { partCount, partsTotal, partsRequired } = m.count();
      expect(await client.read('count')).toEqual({ partCount, partsTotal, ...(partsRequired ? { partsRequired } : {}) });
    }
  });

  it('toolLife gives one record per group, for the tool in use, and filters', async () => {
    const client = await connected();
    const tools = reference.machine.toolLife();
    const records = await client.read('toolLife');
    expect(records.length).toBe(new Set(tools.map((t) => t.groupNum)).size);
    for (const r of records) {
      const tool = tools.find((t) => t.toolNum === r.toolNum);
      expect(tool).toMatchObject({ groupNum: r.groupNum, offsetNum: r.offsetNum, used: r.used, limit: r.limit, unit: 'count' });
    }
    const first = records[0];
    if (first === undefined) throw new Error('no tool life records');
    expect(await client.read('toolLife', { groupNum: first.groupNum })).toEqual([first]);
    expect(await client.read('toolLife', { toolNum: first.toolNum })).toEqual([first]);
  });

  it('programList, currentProgram, and a program upload/download round trip', async () => {
    const client = await connected();
    const m = reference.machine;
    const list = await client.read('programList');
    expect(list.map(({ name, size, comment, dir }) => ({ name, size, comment, dir }))).toEqual(
      m.programList().map(({ name, size, comment, dir }) => ({ name, size, comment, dir })),
    );
    for (const entry of list) expect(entry.modified! % 60_000).toBe(0);
    expect((await client.read('programList', { startPrgNo: 1002 })).every((p) => Number(p.name.slice(1)) >= 1002)).toBe(true);

    const current = await client.read('currentProgram');
    expect(current.name).toBe(m.status().program);
    expect(current.content).toEqual(m.download(DIR, current.name));

    const program = Buffer.from('%\nO7001 (ROUND TRIP)\nG90 G54 G00 X0. Y0.\n' + 'G01 X10. F200\n'.repeat(700) + 'M30\n%\n');
    await client.uploadProgram(DIR, 'O7001', program);
    expect(await client.downloadProgram(DIR, 'O7001')).toEqual(program);
    expect((await client.read('programList')).find((p) => p.name === 'O7001')).toMatchObject({ size: program.length, comment: 'ROUND TRIP' });
  });

  it('rejects program requests the CNC cannot honour with the right errors', async () => {
    const client = await connected();
    expect((await rejection(client.downloadProgram(DIR, 'O4242'))).errorName).toBe('PROGRAM_NOT_FOUND');
    expect((await rejection(client.uploadProgram(DIR, 'O7002', Buffer.from('%\nO7003\nM30\n%\n')))).errorName).toBe('INVALID_PARAMETER');
    expect((await rejection(client.downloadProgram('/elsewhere/', 'O1001'))).message).toContain('driverOptions.programDir');
    const protectedProgram = await rejection(client.uploadProgram(DIR, 'O9001', Buffer.from('%\nO9001 (MACRO)\nM99\n%\n')));
    expect(protectedProgram.errorName).toBe('DRIVER_REQUEST_FAILED');
    expect(protectedProgram.message).toContain('EW_PROT');
    // The failed transfers left the session usable.
    expect((await client.read('status')).mode).toBeDefined();
  });
});

describe('focas driver: program data is bytes (focas-bridge 1.1)', () => {
  it('a Windows-1252 tape program goes to the CNC and back byte for byte; its directory comment reads as text', async () => {
    const client = await connected();
    expect(client.programByteLimits()).toBeNull();
    const program = tapeProgram('O7010');
    await client.uploadProgram(DIR, 'O7010', program);
    expect((await client.downloadProgram(DIR, 'O7010')).toString('hex')).toBe(program.toString('hex'));
    expect((await client.read('programList')).find((p) => p.name === 'O7010')).toMatchObject({ size: program.length, comment: 'Ø 25 SCHAFTFRÄSER' });
    // On the wire each byte is one character: the bridge holds the same bytes.
    const handle = Number((await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_allclibhndl3'), { timeout: 5 })).body.handle);
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_upstart4'), { handle, type: 0, prgname: `${DIR}O7010` });
    const chunk = (await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_upload4'), { handle, length: 4096 })).body;
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_upend4'), { handle });
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_freelibhndl'), { handle });
    expect(chunk).toMatchObject({ rc: 0, length: program.length, data: program.toString('latin1') });
  });

  it('a bridge refuses program data with a character above U+00FF, and the driver refuses such data from a bridge', async () => {
    const handle = Number((await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_allclibhndl3'), { timeout: 5 })).body.handle);
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_dwnstart4'), { handle, type: 0, prgname: DIR });
    const wide = (await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_download4'), { handle, data: '%\nO7011 (Ø 端面)\n' })).body;
    expect(wide).toMatchObject({ rc: 4, detail: expect.stringMatching(/one byte per character/) });
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_dwnend4'), { handle });
    await rawCall(sim.port, 'POST', callPath(MC.machineID, 'cnc_freelibhndl'), { handle });
    expect(() => fromBridgeText('O1 (端面)', { version: '1.1' }, 'bridge:1')).toThrow(/sent U\+7AEF in program data; focas-bridge 1\.1 carries one byte per character/);
    // A 1.0 bridge's text is read as UTF-8, as it always was.
    expect(fromBridgeText('O1 (Ø)', { version: '1.0' }, 'bridge:1')).toEqual(Buffer.from('O1 (Ø)', 'utf8'));
  });

  it('through a focas-bridge 1.0 the driver carries ASCII only, and says which byte it cannot send before sending anything', async () => {
    const old = await startFocasBridge({ machines: [MC], now, protocolVersion: '1.0' });
    try {
      const client = await connected({ cnc: MC.machineID }, old.port);
      expect(client.programByteLimits()).toEqual({ refused: [{ from: 0x80, to: 0xff }], reason: expect.stringMatching(/speaks focas-bridge 1\.0, which carries program text as ASCII only/) });
      const refused = await rejection(client.uploadProgram(DIR, 'O7012', tapeProgram('O7012')));
      expect(refused.errorName).toBe('INVALID_PARAMETER');
      expect(refused.message).toMatch(/byte 0xD8 \('Ø' in Windows-1252\) in line 2, column 8 cannot be sent: the FOCAS bridge at 127\.0\.0\.1:\d+ speaks focas-bridge 1\.0/);
      expect((await rejection(client.downloadProgram(DIR, 'O7012'))).errorName).toBe('PROGRAM_NOT_FOUND');
      const ascii = Buffer.from('\x12%\r\nO7013 (PLAIN)\r\nM30\r\n%\r\n\x14\x00');
      await client.uploadProgram(DIR, 'O7013', ascii);
      expect(await client.downloadProgram(DIR, 'O7013')).toEqual(ascii);
    } finally {
      await old.close();
    }
  });
});

describe('focas driver: unsupported families', () => {
  it('toolNumber has no bridge call: DRIVER_FAMILY_UNSUPPORTED naming driver and family', async () => {
    const client = await connected();
    expect(client.families.has('toolNumber')).toBe(false);
    const error = await rejection(client.read('toolNumber'));
    expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(error.message).toContain("driver 'focas' does not support item family 'toolNumber'");
  });

  it('driverOptions.families restricts what the client declares', async () => {
    const client = await connected({ cnc: MC.machineID, families: ['status'] });
    expect((await rejection(client.read('count'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect((await rejection(client.downloadProgram(DIR, 'O1001'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
  });

  it('EW_NOOPT from the CNC makes the family unsupported on that CNC', async () => {
    const client = await connected({ cnc: LATHE.machineID });
    const error = await rejection(client.read('toolLife'));
    expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(error.message).toContain('EW_NOOPT');
    expect((await client.read('status')).mode).toBeDefined();
  });
});

describe('focas driver: handshake, sessions and timeouts', () => {
  it('refuses a bridge of another major version, accepts another minor', async () => {
    const v2 = await startFocasBridge({ machines: [MC], protocolVersion: '2.0' });
    const v17 = await startFocasBridge({ machines: [MC], protocolVersion: '1.7' });
    try {
      const error = await rejection(focasClient(v2.port, {}).connect());
      expect(error.errorName).toBe('MACHINE_NOT_CONNECTED');
      expect(error.message).toContain('incompatible major version');
      await connected({}, v17.port);
    } finally {
      await Promise.all([v2.close(), v17.close()]);
    }
  });

  it('needs driverOptions.cnc on a bridge with several CNCs, and names a wrong one', async () => {
    expect((await rejection(focasClient(sim.port, {}).connect())).message).toContain('set driverOptions.cnc');
    expect((await rejection(focasClient(sim.port, { cnc: 'NOPE' }).connect())).message).toContain("no CNC named 'NOPE'");
  });

  it('a bridge that does not answer: DRIVER_TIMEOUT within the configured timeouts', async () => {
    const mute = await startSilentBridge('handshake');
    const hung = await startSilentBridge('calls');
    try {
      let started = Date.now();
      const connectError = await rejection(focasClient(mute.port, { connectTimeoutMs: 300 }).connect());
      expect(connectError.errorName).toBe('DRIVER_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(300 + 700);

      const client = await connected({ requestTimeoutMs: 300 }, hung.port);
      started = Date.now();
      const [first, second] = await Promise.all([rejection(client.read('status')), rejection(client.read('count'))]);
      expect(first.errorName).toBe('DRIVER_TIMEOUT');
      expect(first.message).toContain('requestTimeoutMs');
      expect(second.errorName).toBe('DRIVER_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(2 * 300 + 700);
    } finally {
      await Promise.all([mute.close(), hung.close()]);
    }
  });

  it('a freed handle (EW_HANDLE) is MACHINE_NOT_CONNECTED, and connect() opens a new session', async () => {
    const own = await startFocasBridge({ machines: [MC], now });
    try {
      const client = await connected({}, own.port);
      // The bridge's first handle is 1; freeing it behind the client's back is what a bridge restart does.
      await rawCall(own.port, 'POST', callPath(MC.machineID, 'cnc_freelibhndl'), { handle: 1 });
      const error = await rejection(client.read('status'));
      expect(error.errorName).toBe('MACHINE_NOT_CONNECTED');
      expect(error.message).toContain('EW_HANDLE');
      expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
      await client.connect();
      expect((await client.read('status')).mode).toBeDefined();
    } finally {
      await own.close();
    }
  });

  it('tells onConnectionLost when the bridge goes away between requests, and reconnects when it is back', async () => {
    let bridge = await startFocasBridge({ machines: [MC], now });
    const port = bridge.port;
    const client = await connected({}, port);
    const reasons: string[] = [];
    client.onConnectionLost((event) => reasons.push(event.reason));
    await client.read('status');
    await bridge.close();
    const deadline = Date.now() + 5000;
    while (reasons.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reasons).toHaveLength(1);
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect((await rejection(client.connect())).errorName).toBe('MACHINE_NOT_CONNECTED');
    bridge = await startFocasBridge({ machines: [MC], now, port });
    try {
      await client.connect();
      expect((await client.read('status')).mode).toBeDefined();
    } finally {
      await bridge.close();
    }
  });

  it('rejects bad driverOptions naming the field', () => {
    const message = (input: unknown) => {
      const result = focasOptionsSchema.safeParse(input);
      return result.success ? '' : result.error.issues.map((i) => i.message).join('; ');
    };
    expect(message({ requestTimeoutMs: 0 })).toContain('requestTimeoutMs');
    expect(message({ connectTimeoutMs: 'fast' })).toContain('connectTimeoutMs');
    expect(message({ families: ['toolNumber'] })).toContain('families entries must be one of');
    expect(message({ programDir: 'C:/progs' })).toContain('programDir');
    expect(message({ cnc: '' })).toContain('cnc');
    expect(focasOptionsSchema.safeParse({ colour: 'red' }).success).toBe(false);
    expect(focasOptionsSchema.parse({})).toEqual({ requestTimeoutMs: 1000, connectTimeoutMs: 3000, programDir: DIR });
  });
});
