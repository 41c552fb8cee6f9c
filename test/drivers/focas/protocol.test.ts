import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import { startFocasBridge } from '../../../drivers/focas/simulator.js';
import { INFO_PATH, PROTOCOL_NAME, callPath, infoSchema, responseSchemas, returnCodeSchema, type BridgeFunction } from '../../../drivers/focas/protocol.js';
import { EW } from '../../../drivers/focas/return-codes.js';
import { LATHE, MC, T0, rawCall } from './bridge-fixtures.js';

let sim: RunningSimulator;
const clock = { now: T0 + 3_600_000 };

beforeAll(async () => {
  sim = await startFocasBridge({ machines: [MC, LATHE], now: () => clock.now, missingOptions: { [LATHE.machineID]: ['cnc_rdtlinfo'] } });
});
afterAll(() => sim.close());

const call = (fn: BridgeFunction, body: Record<string, unknown>, cnc = MC.machineID) => rawCall(sim.port, 'POST', callPath(cnc, fn), body);
async function openHandle(cnc = MC.machineID): Promise<number> {
  const { body } = await call('cnc_allclibhndl3', { timeout: 1 }, cnc);
  expect(body.rc).toBe(EW.EW_OK);
  return Number(body.handle);
}

describe('focas bridge protocol: handshake', () => {
  it('GET /focas/info names the protocol, a 1.x version and every CNC', async () => {
    const { status, body } = await rawCall(sim.port, 'GET', INFO_PATH);
    expect(status).toBe(200);
    const info = infoSchema.parse(body);
    expect(info.protocol).toBe(PROTOCOL_NAME);
    expect(info.version).toMatch(/^1\.\d+$/);
    expect(info.cncs.map((c) => c.name)).toEqual([MC.machineID, LATHE.machineID]);
  });

  it('a bridge announcing another version says so in the handshake', async () => {
    const v2 = await startFocasBridge({ machines: [MC], protocolVersion: '2.0' });
    try {
      expect(infoSchema.parse((await rawCall(v2.port, 'GET', INFO_PATH)).body).version).toBe('2.0');
    } finally {
      await v2.close();
    }
  });
});

describe('focas bridge protocol: every call answers EW_OK with its FOCAS structure', () => {
  const args: Array<[BridgeFunction, Record<string, unknown>]> = [
    ['cnc_statinfo', {}],
    ['cnc_rdalmmsg', { type: -1, num: 10 }],
    ['cnc_rdopmsg', { type: -1 }],
    ['cnc_exeprgname', {}],
    ['cnc_rdspeed', { type: -1 }],
    ['cnc_actf', {}],
    ['cnc_acts', {}],
    ['pmc_rdpmcrng', { adr_type: 0, data_type: 0, s_number: 12, e_number: 30 }],
    ['cnc_rdposition', { type: -1 }],
    ['cnc_rdsvmeter', {}],
    ['cnc_rdspmeter', { type: 0 }],
    ['cnc_rdparam', { datano: 6712, axis: 0 }],
    ['cnc_rdtlinfo', {}],
    ['cnc_rdtlgrp', { grp_num: 1 }],
    ['cnc_rdtltool', { grp_num: 1, tool_num: 1 }],
    ['cnc_rdprogdir3', { type: 2, top_prog: 0, num_prg: 10 }],
  ];
  it.each(args)('%s', async (fn, extra) => {
    const handle = await openHandle();
    const { status, body } = await call(fn, { handle, ...extra });
    expect(status).toBe(200);
    expect(body.rc).toBe(EW.EW_OK);
    expect(responseSchemas[fn].safeParse(body).success).toBe(true);
    expect((await call('cnc_freelibhndl', { handle })).body.rc).toBe(EW.EW_OK);
  });

  it('ODBST carries the FOCAS field names', async () => {
    const { body } = await call('cnc_statinfo', { handle: await openHandle() });
    expect(Object.keys(body.statinfo as object).sort()).toEqual(['alarm', 'aut', 'edit', 'emergency', 'hdck', 'motion', 'mstb', 'run', 'tmmode']);
  });

  it('cnc_upstart4/upload4/upend4 read a program; cnc_dwnstart4/download4/dwnend4 write one', async () => {
    const handle = await openHandle();
    const program = '%\nO7001 (PROTOCOL TEST)\nG0 X0 Y0\nM30\n%\n';
    expect((await call('cnc_dwnstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/' })).body.rc).toBe(EW.EW_OK);
    expect((await call('cnc_download4', { handle, data: program.slice(0, 10) })).body).toEqual({ rc: 0, length: 10 });
    expect((await call('cnc_download4', { handle, data: program.slice(10) })).body.rc).toBe(EW.EW_OK);
    expect((await call('cnc_dwnend4', { handle })).body.rc).toBe(EW.EW_OK);

    expect((await call('cnc_upstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/O7001' })).body.rc).toBe(EW.EW_OK);
    let text = '';
    for (let i = 0; i < 10; i++) {
      const { body } = await call('cnc_upload4', { handle, length: 16 });
      text += String(body.data);
      if (body.length === 0) break;
    }
    expect((await call('cnc_upend4', { handle })).body.rc).toBe(EW.EW_OK);
    expect(text).toBe(program);
  });
});

describe('focas bridge protocol: return codes', () => {
  const rcOf = async (fn: BridgeFunction, body: Record<string, unknown>, cnc?: string) => returnCodeSchema.parse((await call(fn, body, cnc)).body).rc;

  it('EW_HANDLE (-8) for an unknown, freed or other CNC handle', async () => {
    expect(await rcOf('cnc_statinfo', { handle: 999_999 })).toBe(EW.EW_HANDLE);
    const handle = await openHandle();
    expect(await rcOf('cnc_statinfo', { handle }, LATHE.machineID)).toBe(EW.EW_HANDLE);
    await call('cnc_freelibhndl', { handle });
    expect(await rcOf('cnc_statinfo', { handle })).toBe(EW.EW_HANDLE);
  });

  it('EW_NUMBER (3) for a parameter or tool life group that does not exist', async () => {
    const handle = await openHandle();
    expect(await rcOf('cnc_rdparam', { handle, datano: 1, axis: 0 })).toBe(EW.EW_NUMBER);
    expect(await rcOf('cnc_rdtlgrp', { handle, grp_num: 999 })).toBe(EW.EW_NUMBER);
  });

  it('EW_NOOPT (6) when the CNC lacks the option', async () => {
    const handle = await openHandle(LATHE.machineID);
    expect(await rcOf('cnc_rdtlinfo', { handle }, LATHE.machineID)).toBe(EW.EW_NOOPT);
  });

  it('EW_DATA (5) for a missing program, EW_PROT (7) for a protected one, EW_FUNC (1) out of sequence', async () => {
    const handle = await openHandle();
    expect(await rcOf('cnc_upstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/O4242' })).toBe(EW.EW_DATA);
    expect(await rcOf('cnc_upload4', { handle, length: 100 })).toBe(EW.EW_FUNC);
    await call('cnc_dwnstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/' });
    await call('cnc_download4', { handle, data: '%\nO9001 (MACRO)\nM99\n%\n' });
    expect(await rcOf('cnc_dwnend4', { handle })).toBe(EW.EW_PROT);
  });

  it('EW_BUSY (-1) for a second transfer on one handle; EW_ATTRIB (4) for malformed arguments; EW_FUNC for an unknown call', async () => {
    const handle = await openHandle();
    await call('cnc_upstart4', { handle, type: 0, prgname: 'O4242' });
    await call('cnc_dwnstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/' });
    expect(await rcOf('cnc_upstart4', { handle, type: 0, prgname: '//CNC_MEM/USER/PATH1/O1001' })).toBe(EW.EW_BUSY);
    expect(await rcOf('cnc_rdparam', { handle, datano: 'six' })).toBe(EW.EW_ATTRIB);
    const unknown = await rawCall(sim.port, 'POST', `/focas/cnc/${MC.machineID}/cnc_rdmagic`, { handle });
    expect(unknown.body.rc).toBe(EW.EW_FUNC);
  });

  it('answers HTTP 404 with an error text for a CNC it does not serve', async () => {
    const missing = await call('cnc_statinfo', { handle: 1 }, 'NOPE');
    expect(missing.status).toBe(404);
    expect(String(missing.body.error)).toContain('NOPE');
  });
});
