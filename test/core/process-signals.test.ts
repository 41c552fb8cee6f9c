/**
 * Stop signals on a fake clock: the copies of one Ctrl-C that npm, the shell,
 * cross-env and tsx forward stop the process cleanly once; a later or third
 * press forces the exit; a stop that hangs exits 1 at the deadline naming
 * what did not stop.
 */
import { describe, expect, it } from 'vitest';
import { StopOnSignals, type StopPart, type StopProcess } from '../../core/runtime/process-signals.js';

class FakeProcess implements StopProcess {
  time = 0;
  exits: number[] = [];
  lines: string[] = [];
  private timers: { at: number; run: () => void; cancelled: boolean }[] = [];
  now = () => this.time;
  setTimer(run: () => void, ms: number) {
    const timer = { at: this.time + ms, run, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }
  exit = (code: number) => void this.exits.push(code);
  warn = (line: string) => void this.lines.push(line);
  advance(ms: number): void {
    this.time += ms;
    for (const t of this.timers.filter((x) => !x.cancelled && x.at <= this.time)) {
      t.cancelled = true;
      t.run();
    }
  }
}

/** A part whose stop finishes when the test says so. */
function controllablePart(name: string) {
  let finish!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  let started = 0;
  const part: StopPart = {
    name,
    stop: () => {
      started++;
      return done;
    },
  };
  return { part, finish, fail, started: () => started };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('stop on signals', () => {
  it('three copies of one Ctrl-C within 50 ms start one stop and exit 0 once it finishes', async () => {
    const proc = new FakeProcess();
    const gw = controllablePart('gateway');
    let stoppedCalls = 0;
    const stop = new StopOnSignals({ parts: [gw.part], onStopped: () => stoppedCalls++ }, proc);
    stop.receive('SIGINT');
    proc.advance(30);
    stop.receive('SIGINT');
    proc.advance(20);
    stop.receive('SIGINT');
    expect(gw.started()).toBe(1);
    expect(proc.exits).toEqual([]);
    gw.finish();
    await settle();
    expect(proc.exits).toEqual([0]);
    expect(stoppedCalls).toBe(1);
    expect(proc.lines).toEqual([]);
  });

  it('a second press within 2 s is not forced; it says the stop is still under way', async () => {
    const proc = new FakeProcess();
    const gw = controllablePart('gateway');
    const stop = new StopOnSignals({ parts: [gw.part] }, proc);
    stop.receive('SIGINT');
    proc.advance(1200);
    stop.receive('SIGINT');
    expect(proc.exits).toEqual([]);
    expect(proc.lines.join('\n')).toContain('still stopping (gateway)');
    gw.finish();
    await settle();
    expect(proc.exits).toEqual([0]);
  });

  it('a press more than 2 s after the first forces exit 1 naming what did not stop', async () => {
    const proc = new FakeProcess();
    const gw = controllablePart('gateway');
    const sims = controllablePart('modbus simulator');
    const stop = new StopOnSignals({ parts: [gw.part, { ...sims.part, detail: () => '3 clients' }] }, proc);
    stop.receive('SIGINT');
    gw.finish();
    await settle();
    proc.advance(2100);
    stop.receive('SIGINT');
    expect(proc.exits).toEqual([1]);
    expect(proc.lines.at(-1)).toBe('SIGINT again: exiting without a clean stop; not stopped: modbus simulator (3 clients)');
    sims.finish();
    await settle();
    expect(proc.exits).toEqual([1]);
  });

  it('a third separate press forces the exit even within 2 s', () => {
    const proc = new FakeProcess();
    const gw = controllablePart('gateway');
    const stop = new StopOnSignals({ parts: [gw.part] }, proc);
    stop.receive('SIGINT');
    proc.advance(700);
    stop.receive('SIGINT');
    proc.advance(700);
    expect(proc.exits).toEqual([]);
    stop.receive('SIGTERM');
    expect(proc.exits).toEqual([1]);
    expect(proc.lines.at(-1)).toContain('SIGTERM again: exiting without a clean stop; not stopped: gateway');
  });

  it('a stop that hangs past the deadline exits 1 naming the part that did not stop', async () => {
    const proc = new FakeProcess();
    const fast = controllablePart('opcua simulator');
    const hung = controllablePart('mqtt simulator');
    const stop = new StopOnSignals({ parts: [fast.part, hung.part], deadlineMs: 10_000 }, proc);
    stop.receive('SIGTERM');
    fast.finish();
    await settle();
    proc.advance(9_999);
    expect(proc.exits).toEqual([]);
    proc.advance(1);
    expect(proc.exits).toEqual([1]);
    expect(proc.lines).toEqual(['stop did not finish within 10 s; not stopped: mqtt simulator; exiting']);
  });

  it('a part whose stop fails exits 1 with its name and error, after the others stopped', async () => {
    const proc = new FakeProcess();
    const a = controllablePart('gateway');
    const stop = new StopOnSignals({ parts: [a.part] }, proc);
    stop.receive('SIGINT');
    a.fail(new Error('database is locked'));
    await settle();
    expect(proc.exits).toEqual([1]);
    expect(proc.lines).toEqual(['stop failed: gateway: database is locked']);
  });

  it('in order: the program service stops first, the gateway only once it finished; a failure does not keep the next from stopping', async () => {
    const proc = new FakeProcess();
    const programs = controllablePart('programs');
    const gw = controllablePart('gateway');
    const stop = new StopOnSignals({ parts: [programs.part, gw.part], inOrder: true, deadlineMs: 10_000 }, proc);
    stop.receive('SIGTERM');
    await settle();
    expect([programs.started(), gw.started()]).toEqual([1, 0]);
    expect(stop.notStopped()).toEqual(['programs', 'gateway']);
    programs.fail(new Error('webhook queue did not drain'));
    await settle();
    expect([programs.started(), gw.started()]).toEqual([1, 1]);
    expect(proc.exits).toEqual([]);
    gw.finish();
    await settle();
    expect(proc.exits).toEqual([1]);
    expect(proc.lines).toEqual(['stop failed: programs: webhook queue did not drain']);
  });

  it('in order, a hung first part is named at the deadline with the part still waiting behind it', async () => {
    const proc = new FakeProcess();
    const programs = controllablePart('programs');
    const gw = controllablePart('gateway');
    const stop = new StopOnSignals({ parts: [programs.part, gw.part], inOrder: true, deadlineMs: 10_000 }, proc);
    stop.receive('SIGINT');
    await settle();
    proc.advance(10_000);
    expect(proc.exits).toEqual([1]);
    expect(proc.lines).toEqual(['stop did not finish within 10 s; not stopped: programs, gateway; exiting']);
    expect(gw.started()).toBe(0);
  });
});
