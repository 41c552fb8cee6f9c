import { describe, expect, it } from 'vitest';
import type { CncStatus } from '../../../core/driver-seam/driver.js';
import {
  AlarmFirstSeen, programNameInContent, toAlarmEntries, toCncStatus, toFeedAndSpindle, toPartCount, toTimeData, toToolLife,
} from '../../../drivers/focas/mapping.js';
import type { Odbst } from '../../../drivers/focas/protocol.js';
import { EW, describeReturnCode, errorForReturnCode } from '../../../drivers/focas/return-codes.js';

const base: Odbst = { hdck: 0, tmmode: 1, aut: 1, run: 0, motion: 0, mstb: 0, emergency: 0, alarm: 0, edit: 0 };
const exeprg = { name: 'O1001', o_num: 1001 };

type Expected = Pick<CncStatus, 'cncStatus' | 'adjustedStatus' | 'mode' | 'alarmLevel' | 'alarmStatus' | 'emergency' | 'programStatus'>;
const row = (st: Partial<Odbst>, opmsgs: number, expected: Expected): [string, Partial<Odbst>, number, Expected] => [
  `${JSON.stringify(st)}${opmsgs ? ` + ${opmsgs} operator message` : ''}`, st, opmsgs, expected,
];

describe('cnc_statinfo (ODBST) → CncStatus', () => {
  const table = [
    row({ aut: 1, run: 3 }, 0, { cncStatus: 'STRT', adjustedStatus: 'RUNNING', mode: 'AUTO', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'running' }),
    row({ aut: 1, run: 2 }, 0, { cncStatus: 'HOLD', adjustedStatus: 'HOLD', mode: 'AUTO', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'hold' }),
    row({ aut: 1, run: 1 }, 0, { cncStatus: 'STOP', adjustedStatus: 'STOPPED', mode: 'AUTO', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 1, run: 0 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'AUTO', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 5, run: 4 }, 0, { cncStatus: 'MSTR', adjustedStatus: 'STOPPED', mode: 'JOG', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 0, run: 0 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'MDI', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 3 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'EDIT', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 4 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'HANDLE', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 8 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'MANUAL', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 9 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'REF', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ aut: 10, run: 3 }, 0, { cncStatus: 'STRT', adjustedStatus: 'RUNNING', mode: 'REMOTE', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'running' }),
    row({ aut: 42 }, 0, { cncStatus: '****', adjustedStatus: 'RESET', mode: 'UNKNOWN', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
    row({ run: 1, alarm: 1 }, 0, { cncStatus: 'STOP', adjustedStatus: 'STOPPED', mode: 'AUTO', alarmLevel: 'alarm', alarmStatus: true, emergency: false, programStatus: 'stopped' }),
    row({ run: 3, alarm: 2 }, 0, { cncStatus: 'STRT', adjustedStatus: 'RUNNING', mode: 'AUTO', alarmLevel: 'warning', alarmStatus: false, emergency: false, programStatus: 'running' }),
    row({ run: 3 }, 1, { cncStatus: 'STRT', adjustedStatus: 'RUNNING', mode: 'AUTO', alarmLevel: 'warning', alarmStatus: false, emergency: false, programStatus: 'running' }),
    row({ emergency: 1, alarm: 1 }, 0, { cncStatus: '-EMG-', adjustedStatus: 'EMERGENCY', mode: 'AUTO', alarmLevel: 'emergency', alarmStatus: true, emergency: true, programStatus: 'stopped' }),
    row({ run: 1, emergency: 2 }, 0, { cncStatus: 'STOP', adjustedStatus: 'RESET', mode: 'AUTO', alarmLevel: 'none', alarmStatus: false, emergency: false, programStatus: 'stopped' }),
  ];
  it.each(table)('%s', (_, st, operatorMessages, expected) => {
    const status = toCncStatus({ statinfo: { ...base, ...st }, exeprg, operatorMessages }, 1234);
    expect(status).toMatchObject({ ...expected, program: 'O1001', time: 1234 });
  });

  it('no program selected gives programStatus none and no program', () => {
    const status = toCncStatus({ statinfo: base, exeprg: { name: '', o_num: 0 }, operatorMessages: 0 }, 0);
    expect(status.programStatus).toBe('none');
    expect(status.program).toBeUndefined();
  });
});

describe('alarms, overrides, parameters, tool life', () => {
  it('builds FANUC alarm codes from type and number; operator messages are warnings; e-stop raises the level', () => {
    const almmsg = [{ alm_no: 401, type: 6, axis: 0, msg_len: 17, alm_msg: 'SERVO V-READY OFF' }];
    // char_num bounds the text, as FOCAS buffers are fixed-size and may carry junk past it.
    const opmsg = [{ datano: 2001, type: 0, char_num: 16, data: 'WAY LUBE OIL LOW####' }, { datano: -1, type: 0, char_num: 0, data: '' }];
    expect(toAlarmEntries(almmsg, opmsg, false)).toEqual([
      { code: 'SV0401', message: 'SERVO V-READY OFF', level: 'alarm' },
      { code: '2001', message: 'WAY LUBE OIL LOW', level: 'warning' },
    ]);
    expect(toAlarmEntries(almmsg, [], true)[0]?.level).toBe('emergency');
  });

  it('keeps an alarm\'s first-seen time while it stays active and restarts it after it clears', () => {
    const seen = new AlarmFirstSeen();
    const entry = { code: 'SV0401', message: 'X', level: 'alarm' as const };
    expect(seen.stamp([entry], 100)[0]?.since).toBe(100);
    expect(seen.stamp([entry], 200)[0]?.since).toBe(100);
    expect(seen.stamp([], 300)).toEqual([]);
    expect(seen.stamp([entry], 400)[0]?.since).toBe(400);
  });

  it('reads overrides from G0012 (inverted), G0014 (ROV bits) and G0030', () => {
    const cdata = new Array<number>(19).fill(0);
    cdata[0] = ~120 & 0xff;
    cdata[2] = 0b10;
    cdata[18] = 90;
    const feed = { data: 12345, dec: 1, unit: 0, name: 'F', suff: '' };
    expect(toFeedAndSpindle(feed, 3000, { type_a: 0, type_d: 0, datano_s: 12, datano_e: 30, cdata })).toEqual({
      feedRate: 1234.5, feedOverride: 120, spindleSpeed: 3000, spindleOverride: 90, rapidOverride: 25,
    });
    expect(toFeedAndSpindle({ ...feed, data: 10, dec: 0, unit: 1 }, 0, { type_a: 0, type_d: 0, datano_s: 12, datano_e: 30, cdata }).feedRate).toBe(254);
  });

  it('combines minute and millisecond parameters into seconds; 6713 = 0 leaves partsRequired out', () => {
    const params = new Map([[6750, 600], [6751, 30_500], [6752, 120], [6753, 1_000], [6754, 60], [6757, 59_999], [6758, 1]]);
    expect(toTimeData(params)).toEqual({ powerOnTime: 36_000, operatingTime: 7230.5, cuttingTime: 3601, cycleTime: 119.999 });
    expect(toPartCount(new Map([[6711, 5], [6712, 900], [6713, 0]]))).toEqual({ partCount: 5, partsTotal: 900 });
    expect(toPartCount(new Map([[6711, 5], [6712, 900], [6713, 20]])).partsRequired).toBe(20);
  });

  it('reports one record per tool life group, for its tool in use', () => {
    const tlgrp = { ntool: 2, nfree: 0, life: 200, count: 50, use_tool: 3, opt_grpno: 2, life_rest: 150, rest_sig: 0, count_type: 0 };
    expect(toToolLife([{ grpNum: 2, tlgrp, toolInUse: { tool_num: 3, h_code: 13, d_code: 13, tool_inf: 1 } }])).toEqual([
      { toolNum: 3, groupNum: 2, offsetNum: 13, used: 50, limit: 200, unit: 'count', remainingPercent: 75 },
    ]);
    expect(toToolLife([{ grpNum: 1, tlgrp: { ...tlgrp, count_type: 1 }, toolInUse: { tool_num: 3, h_code: 3, d_code: 3, tool_inf: 1 } }])[0]?.unit).toBe('minutes');
  });

  it('takes the program name from the first block, as FOCAS does', () => {
    expect(programNameInContent('%\nO1234 (X)\nM30\n%')).toBe('O1234');
    expect(programNameInContent('\r\n<MAIN-PART>\nM30\n%')).toBe('MAIN-PART');
    expect(programNameInContent('%\nG0 X0\n%')).toBeUndefined();
  });
});

describe('FOCAS return codes → gateway errors', () => {
  const table: Array<[number, string, string]> = [
    [EW.EW_SOCKET, 'cnc_statinfo', 'MACHINE_NOT_CONNECTED'],
    [EW.EW_HANDLE, 'cnc_statinfo', 'MACHINE_NOT_CONNECTED'],
    [EW.EW_BUSY, 'cnc_statinfo', 'DRIVER_REQUEST_FAILED'],
    [EW.EW_NUMBER, 'cnc_rdparam', 'DRIVER_REQUEST_FAILED'],
    [EW.EW_NOOPT, 'cnc_rdtlinfo', 'DRIVER_FAMILY_UNSUPPORTED'],
    [EW.EW_FUNC, 'cnc_rdspeed', 'DRIVER_FAMILY_UNSUPPORTED'],
    [EW.EW_FUNC, 'cnc_upload4', 'DRIVER_REQUEST_FAILED'],
    [EW.EW_DATA, 'cnc_upstart4', 'PROGRAM_NOT_FOUND'],
    [EW.EW_PROT, 'cnc_dwnend4', 'DRIVER_REQUEST_FAILED'],
  ];
  it.each(table)('rc %i from %s → %s', (rc, fn, name) => {
    const family = fn.includes('load') || fn.includes('dwn') || fn.includes('upstart') ? 'programFiles' : 'status';
    const error = errorForReturnCode({ fn, rc, cnc: 'MC-01', family });
    expect(error.errorName).toBe(name);
    expect(error.message).toContain(fn);
  });

  it('names the code and its meaning, and copes with unknown codes', () => {
    expect(describeReturnCode(6)).toBe('EW_NOOPT (6, CNC option not available)');
    expect(describeReturnCode(99)).toContain('unknown');
  });
});
