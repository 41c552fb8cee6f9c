import { describe, expect, it } from 'vitest';
import { MachineReplay, type Observation, type ReplayRow } from '../../../plugins/mtconnect-agent/replay.js';
import { controllerModeValue, executionValue } from '../../../plugins/mtconnect-agent/value-map.js';

const status = (over: Record<string, unknown> = {}) => ({
  cncStatus: 'STRT',
  adjustedStatus: 'RUNNING',
  alarmStatus: false,
  alarmLevel: 'none',
  mode: 'AUTO',
  programStatus: 'running',
  emergency: false,
  program: 'O1000',
  time: 0,
  ...over,
});

let seq = 0;
const row = (cls: string, data: Record<string, unknown>): ReplayRow => ({ seq: ++seq, machineID: 'M1', cls, ts: seq * 1000, data });
const state = (s: string, connection = 'online') => row('State', { state: s, reason: `${s}: because`, connection });

function run(replay: MachineReplay, r: ReplayRow): Observation[] {
  const out: Observation[] = [];
  replay.apply(r, (o) => out.push(o));
  return out;
}

const brief = (os: Observation[]) => os.map((o) => `${o.item}@${o.seq % 100}=${o.level ?? ''}${o.value}${o.nativeCode ? `#${o.nativeCode}` : ''}`);

describe('MTConnect observations replayed from history rows', () => {
  it('the first State row makes every data item observed, the status items UNAVAILABLE until a status is current', () => {
    const r = new MachineReplay('M1');
    const first = state('noData');
    expect(brief(run(r, first))).toEqual([
      'avail@0=AVAILABLE',
      'state@1=noData: because',
      'estop@2=UNAVAILABLE',
      'mode@3=UNAVAILABLE',
      'exec@4=UNAVAILABLE',
      'program@5=UNAVAILABLE',
      'partCount@6=UNAVAILABLE',
      'connection@7=ESTABLISHED',
      'vaultProgram@9=UNAVAILABLE',
      'vaultHash@49=UNAVAILABLE',
      'system@8=Unavailable',
    ]);
    // Each observation's sequence number is the row's seq × 100 + its slot.
    expect(run(r, row('CNCStatus', status())).length).toBe(0);
    const running = state('running');
    expect(brief(run(r, running))).toEqual(['state@1=running: because', 'estop@2=ARMED', 'mode@3=AUTOMATIC', 'exec@4=ACTIVE', 'program@5=O1000', 'system@8=Normal']);
    expect(r.last.exec?.seq).toBe(running.seq * 100 + 4);
    expect(r.last.avail?.seq).toBe(first.seq * 100);
  });

  it('a CNCStatus row emits only the values it changed, and nothing for a field no data item shows', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status()));
    run(r, state('running'));
    expect(brief(run(r, row('CNCStatus', status({ adjustedStatus: 'HOLD', programStatus: 'hold' }))))).toEqual(['exec@4=FEED_HOLD']);
    expect(brief(run(r, row('CNCStatus', status({ adjustedStatus: 'HOLD', cncStatus: 'HOLD' }))))).toEqual([]);
    expect(brief(run(r, row('CNCStatus', status({ adjustedStatus: 'HOLD', mode: 'MDI', emergency: true }))))).toEqual(['estop@2=TRIGGERED', 'mode@3=MANUAL_DATA_INPUT']);
  });

  it('going offline makes the status items, the part count and the condition UNAVAILABLE; back, the values and the open alarms are shown again', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status({ alarmLevel: 'alarm', alarmStatus: true })));
    run(r, row('Count', { partCount: 12, partsTotal: 40 }));
    run(r, state('alarm'));
    const start = run(r, row('AlarmLog', { event: 'start', code: '1001', message: 'SPINDLE OVERLOAD', level: 'alarm', since: 1 }));
    expect(brief(start)).toEqual(['system@10=FaultSPINDLE OVERLOAD#1001']);
    expect(start[0]?.nativeSeverity).toBe('alarm');
    expect(brief(run(r, state('offline', 'backoff')))).toEqual([
      'avail@0=UNAVAILABLE',
      'state@1=offline: because',
      'estop@2=UNAVAILABLE',
      'mode@3=UNAVAILABLE',
      'exec@4=UNAVAILABLE',
      'program@5=UNAVAILABLE',
      'partCount@6=UNAVAILABLE',
      'connection@7=CLOSED',
      'system@8=Unavailable',
    ]);
    expect(brief(r.conditionNow())).toEqual(['system@8=Unavailable']);
    const back = state('alarm');
    expect(brief(run(r, back))).toEqual(['avail@0=AVAILABLE', 'state@1=alarm: because', 'estop@2=ARMED', 'mode@3=AUTOMATIC', 'exec@4=ACTIVE', 'program@5=O1000', 'partCount@6=12', 'connection@7=ESTABLISHED', 'system@10=FaultSPINDLE OVERLOAD#1001']);
    expect(r.conditionNow().map((o) => o.seq)).toEqual([back.seq * 100 + 10]);
    expect(brief(run(r, row('AlarmLog', { event: 'end', code: '1001', message: 'SPINDLE OVERLOAD', level: 'alarm', since: 1 })))).toEqual(['system@10=Normal#1001']);
    expect(brief(r.conditionNow())).toEqual(['system@10=Normal#1001']);
  });

  it('an alarm logged again after a restart is shown once, and a heartbeat closes the alarms the status says are over', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status({ alarmLevel: 'warning' })));
    run(r, state('idle'));
    const alarm = { code: '2002', message: 'LUBE LOW', level: 'warning', since: 5 };
    const other = { code: '3003', message: 'DOOR', level: 'alarm', since: 6 };
    expect(brief(run(r, row('AlarmLog', { event: 'start', ...alarm })))).toEqual(['system@10=WarningLUBE LOW#2002']);
    run(r, row('AlarmLog', { event: 'start', ...other }));
    // The actor restarted: the same warning is logged again with its original since.
    expect(run(r, row('AlarmLog', { event: 'start', ...alarm }))).toEqual([]);
    // The status says no alarm of level `alarm` is active: the DOOR alarm ended while the gateway was stopped.
    expect(brief(run(r, row('Heartbeat', { state: 'idle', connection: 'online', statusStale: false })))).toEqual(['system@10=Normal#3003']);
    expect(brief(r.conditionNow())).toEqual(['system@10=WarningLUBE LOW#2002']);
  });

  it('a row applied only up to a sequence number leaves its later observations out of the last values', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status()));
    const first = state('noData');
    run(r, first);
    const running = state('running');
    const out: Observation[] = [];
    r.apply(running, (o) => out.push(o), running.seq * 100 + 3);
    expect(brief(out)).toEqual(['state@1=running: because', 'estop@2=ARMED', 'mode@3=AUTOMATIC']);
    expect(r.last.exec?.seq).toBe(first.seq * 100 + 4);
    expect(r.conditionNow()[0]?.level).toBe('Unavailable');
  });

  it('the running program\'s vault version: shown while the machine runs the file the gateway last wrote from the vault, UNAVAILABLE otherwise', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status({ program: 'O1000' })));
    run(r, state('running'));
    const hash = 'a'.repeat(64);
    // A file the machine does not run changes nothing.
    expect(run(r, row('ProgramVersion', { dir: '//CNC_MEM/USER/PATH1/', name: 'O2000', program: 'flange', version: 1, sha256: 'b'.repeat(64) }))).toEqual([]);
    const written = row('ProgramVersion', { dir: '//CNC_MEM/USER/PATH1/', name: 'O1000', program: 'bracket-op10', version: 4, sha256: hash });
    expect(brief(run(r, written))).toEqual(['vaultProgram@9=bracket-op10', `vaultHash@49=${hash}`]);
    expect([r.last.vaultProgram?.seq, r.last.vaultHash?.seq]).toEqual([written.seq * 100 + 9, written.seq * 100 + 49]);
    // The machine runs another file, then the vault's again.
    expect(brief(run(r, row('CNCStatus', status({ program: 'O3000' }))))).toEqual(['program@5=O3000', 'vaultProgram@9=UNAVAILABLE', 'vaultHash@49=UNAVAILABLE']);
    expect(brief(run(r, row('CNCStatus', status({ program: 'O2000' }))))).toEqual(['program@5=O2000', 'vaultProgram@9=flange', `vaultHash@49=${'b'.repeat(64)}`]);
    expect(brief(run(r, row('CNCStatus', status({ program: 'O1000' }))))).toEqual(['program@5=O1000', 'vaultProgram@9=bracket-op10', `vaultHash@49=${hash}`]);
    // Not current: UNAVAILABLE like the program; current again: shown again.
    expect(brief(run(r, state('offline', 'backoff')))).toContain('vaultHash@49=UNAVAILABLE');
    expect(brief(run(r, state('running')))).toEqual(expect.arrayContaining(['vaultProgram@9=bracket-op10', `vaultHash@49=${hash}`]));
    // The file written again without a vault version is no version any more.
    expect(brief(run(r, row('ProgramVersion', { dir: '//CNC_MEM/USER/PATH1/', name: 'O1000' })))).toEqual(['vaultProgram@9=UNAVAILABLE', 'vaultHash@49=UNAVAILABLE']);
  });

  it('a State row that changes every item, the vault version, the condition with the most alarms it shows and the motion items gives each observation its own sequence number', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', status({ alarmLevel: 'alarm', alarmStatus: true })));
    run(r, row('ProgramVersion', { dir: '/', name: 'O1000', program: 'bracket', version: 1, sha256: 'c'.repeat(64) }));
    run(r, row('Motion', { toolNumber: 3, spindleSpeed: 1200, spindleLoad: 40, axes: Array.from({ length: 47 }, (_, i) => ({ axis: `A${i}`, unit: 'mm', machine: i })) }));
    for (let i = 0; i < 60; i++) run(r, row('AlarmLog', { event: 'start', code: String(i), message: `ALARM ${i}`, level: 'alarm', since: 1 }));
    const back = state('alarm');
    const out = run(r, back);
    const slots = out.map((o) => o.seq - back.seq * 100);
    expect(new Set(slots).size).toBe(slots.length);
    expect(Math.max(...slots)).toBeLessThan(100);
    expect(out.filter((o) => o.item === 'system')).toHaveLength(39);
    expect(brief(out.filter((o) => o.item === 'vaultProgram' || o.item === 'vaultHash'))).toEqual(['vaultProgram@9=bracket', `vaultHash@49=${'c'.repeat(64)}`]);
    expect(out.filter((o) => String(o.item).startsWith('axis:'))).toHaveLength(47);
  });

  it('maps the normalised execution states and operating modes to MTConnect values', () => {
    expect(['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY', 'BOGUS'].map(executionValue)).toEqual(['ACTIVE', 'FEED_HOLD', 'STOPPED', 'READY', 'STOPPED', 'UNAVAILABLE']);
    expect(['AUTO', 'REMOTE', 'MDI', 'MANUAL', 'JOG', 'HANDLE', 'REF', 'EDIT', 'UNKNOWN'].map(controllerModeValue)).toEqual([
      'AUTOMATIC',
      'AUTOMATIC',
      'MANUAL_DATA_INPUT',
      'MANUAL',
      'MANUAL',
      'MANUAL',
      'MANUAL',
      'EDIT',
      'UNAVAILABLE',
    ]);
  });
});
