import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { machineConfigSchema, type MachineConfigInput } from '../../../../../core/roles/gateway/machine-config.js';
import { backoffDelay, deriveFromContext, machineActorLogic, type MachineActorDeps } from '../../../../../core/roles/gateway/fleet/machine-actor.js';
import { GatewayError } from '../../../../../core/interfaces/errors.js';
import { makeStatus, MemorySink, ScriptedClient } from '../../../../fixtures/scripted-client.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);

function start(machine: Partial<MachineConfigInput> = {}, deps: Partial<MachineActorDeps> = {}) {
  const config = machineConfigSchema.parse({ machineID: 'M1', name: 'M1', driver: 'scripted', ...machine });
  const client = (deps.client as ScriptedClient | undefined) ?? new ScriptedClient();
  const sink = new MemorySink();
  const lags: number[] = [];
  const actor = createActor(machineActorLogic, {
    input: {
      config,
      client,
      sink,
      timeZone: 'UTC',
      heartbeatMs: 60_000,
      now: () => Date.now(),
      random: () => 0.5,
      onSampleLag: (_task, lag) => lags.push(lag),
      ...deps,
    },
  });
  client.onConnectionLost((e) => actor.send({ type: 'CONNECTION_LOST', reason: e.reason }));
  actor.start();
  const ctx = () => actor.getSnapshot().context;
  const derived = () => deriveFromContext(ctx(), Date.now());
  return { actor, client, sink, lags, ctx, derived };
}

let stop: (() => void) | undefined;
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  stop?.();
  stop = undefined;
  vi.useRealTimers();
});

describe('machine actor', () => {
  it('connects, goes online and caches the latest sample of each class with its timestamp', async () => {
    const m = start();
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(m.ctx().connection.state).toBe('online');
    const status = m.ctx().cache.CNCStatus;
    expect(status.value?.status.adjustedStatus).toBe('RUNNING');
    expect(status.sampledAt).toBeGreaterThan(T0);
    expect(status.sampledAt).toBeLessThanOrEqual(Date.now());
    expect(m.derived().state).toBe('running');
  });

  it('runs one timer per enabled task, each with its own interval, and none for a disabled task', async () => {
    const m = start({
      tasks: {
        CNCStatus: { enabled: true, intervalMs: 1000 },
        Count: { enabled: true, intervalMs: 5000 },
        Cycle: { enabled: false, intervalMs: 5000 },
        TimeData: { enabled: true, intervalMs: 10_000 },
        ToolLife: { enabled: false, intervalMs: 30_000 },
        OEE: { enabled: true, intervalMs: 60_000 },
      },
    });
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    const count = (f: string) => m.client.reads.filter((r) => r === f).length;
    expect(count('status')).toBeGreaterThanOrEqual(59);
    expect(count('status')).toBeLessThanOrEqual(61);
    // Count is read by the Count task only (Cycle is disabled): every 5 s.
    expect(count('count')).toBeGreaterThanOrEqual(11);
    expect(count('count')).toBeLessThanOrEqual(13);
    expect(count('timeData')).toBeGreaterThanOrEqual(5);
    expect(count('timeData')).toBeLessThanOrEqual(7);
    expect(count('toolLife')).toBe(0);
    expect(m.ctx().cache.Cycle.sampledAt).toBeUndefined();
    expect(m.ctx().cache.OEE.value?.plannedTimeSec).toBeGreaterThan(0);
  });

  it('keeps a fixed-rate schedule: samples land on their due times without drift', async () => {
    const m = start();
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(m.lags.length).toBeGreaterThan(20);
    expect(Math.max(...m.lags)).toBeLessThan(5);
  });

  it('caches the last error of a task and clears it on the next success', async () => {
    const m = start({ tasks: { ToolLife: { enabled: true, intervalMs: 1000 } } });
    stop = () => m.actor.stop();
    m.client.families = new Set(['status', 'alarm', 'count', 'timeData']);
    await vi.advanceTimersByTimeAsync(3_000);
    const err = m.ctx().cache.ToolLife.error;
    expect(err?.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(err?.message).toMatch(/driver 'scripted' does not support item family 'toolLife'/);
    // An unsupported family is a request error, not a dead link.
    expect(m.ctx().connection.state).toBe('online');
    m.client.families = new Set(['status', 'alarm', 'count', 'timeData', 'toolLife']);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(m.ctx().cache.ToolLife.error).toBeUndefined();
    expect(m.ctx().cache.ToolLife.value).toEqual([]);
  });

  it('backs off with jitter up to a bound, reports offline after repeated failures, and recovers', async () => {
    const client = new ScriptedClient();
    client.connectError = new GatewayError('MACHINE_NOT_CONNECTED', 'ECONNREFUSED');
    const m = start({ connection: { backoffBaseMs: 1000, backoffMaxMs: 8000, offlineAfterAttempts: 3 } }, { client });
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(100);
    expect(m.ctx().connection.state).toBe('backoff');
    expect(m.ctx().connection.attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(m.ctx().connection.state).toBe('offline');
    const attempts = client.connects;
    // Delays 0.75 s, 1.5 s, 3 s, 6 s, then bounded at 6 s (random fixed at 0.5): about 12 attempts in 60 s.
    expect(attempts).toBeGreaterThanOrEqual(10);
    expect(attempts).toBeLessThanOrEqual(14);
    expect(m.derived().state).toBe('offline');
    expect(m.derived().reason).toMatch(/connection=offline, error=".*ECONNREFUSED"/);
    client.connectError = undefined;
    await vi.advanceTimersByTimeAsync(8_000);
    expect(m.ctx().connection.state).toBe('online');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(m.derived().state).toBe('running');
  });

  it('backoffDelay grows exponentially with jitter and never passes the bound', () => {
    const delays = [1, 2, 3, 4, 5, 6, 10].map((a) => backoffDelay(a, 1000, 8000, () => 0.999));
    expect(delays.slice(0, 4)).toEqual([1000, 1999, 3998, 7996]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(8000);
    expect(backoffDelay(3, 1000, 8000, () => 0)).toBe(2000);
  });

  it('GW-20 a lost link goes to backoff; once the status is stale the machine is offline with statusStale', async () => {
    const m = start({ connection: { backoffBaseMs: 60_000, backoffMaxMs: 60_000 } });
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(m.derived().state).toBe('running');
    m.client.connectError = new GatewayError('MACHINE_NOT_CONNECTED', 'host unreachable');
    m.client.loseLink('socket closed by peer');
    await vi.advanceTimersByTimeAsync(10);
    expect(m.ctx().connection.state).toBe('backoff');
    expect(m.derived().state).toBe('running');
    await vi.advanceTimersByTimeAsync(4_000);
    const d = m.derived();
    expect(d.state).toBe('offline');
    expect(d.statusStale).toBe(true);
    expect(m.sink.of('State').map((r) => (r.data as { state: string }).state)).toEqual(['noData', 'running', 'offline']);
  });

  it('treats repeated link errors on samples as a lost connection', async () => {
    const m = start({ connection: { failuresBeforeLost: 3, backoffBaseMs: 60_000, backoffMaxMs: 60_000 } });
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    m.client.readError = new GatewayError('DRIVER_TIMEOUT', 'no answer in 1000 ms');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(m.ctx().connection.state).toBe('online');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(m.ctx().connection.state).toBe('backoff');
    expect(m.ctx().connection.error?.message).toMatch(/no answer in 1000 ms/);
  });

  it('times out a sample that never answers, using the request watchdog', async () => {
    const m = start({ connection: { requestTimeoutMs: 500 } });
    stop = () => m.actor.stop();
    m.client.hang = true;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(m.ctx().cache.CNCStatus.error?.errorName).toBe('DRIVER_TIMEOUT');
  });

  it('writes status rows on change only, alarm start and end, finished alarms, counts and heartbeats', async () => {
    const m = start({}, { heartbeatMs: 10_000 });
    stop = () => m.actor.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(m.sink.of('CNCStatus')).toHaveLength(1);
    const alarmSince = Date.now();
    m.client.values.status = makeStatus({ adjustedStatus: 'STOPPED', cncStatus: 'STOP', alarmStatus: true, alarmLevel: 'alarm' });
    m.client.values.alarm = [{ code: 'SV0401', message: 'SERVO V-READY OFF', level: 'alarm', since: alarmSince }];
    await vi.advanceTimersByTimeAsync(5_000);
    expect(m.sink.of('CNCStatus')).toHaveLength(2);
    expect(m.sink.of('AlarmLog').map((r) => (r.data as { event: string }).event)).toEqual(['start']);
    m.client.values.status = makeStatus();
    m.client.values.alarm = [];
    m.client.values.count = { partCount: 3, partsTotal: 3, lastCycleTime: 61, program: 'O1001' };
    await vi.advanceTimersByTimeAsync(10_000);
    expect(m.sink.of('CNCStatus')).toHaveLength(3);
    expect(m.sink.of('AlarmLog').map((r) => (r.data as { event: string }).event)).toEqual(['start', 'end']);
    const finished = m.sink.of('AlarmHistory');
    expect(finished).toHaveLength(1);
    expect(finished[0]?.data).toMatchObject({ code: 'SV0401', start: alarmSince });
    expect((finished[0]?.data as { durationSec: number }).durationSec).toBeGreaterThanOrEqual(4);
    expect(m.sink.of('Count').map((r) => r.data)).toEqual([
      { delta: 3, partCount: 3, partsTotal: 3, lastCycleTime: 61, program: 'O1001' },
    ]);
    expect(m.sink.of('Heartbeat')).toHaveLength(2);
    expect(m.sink.of('State').map((r) => (r.data as { state: string }).state)).toEqual(['noData', 'running', 'alarm', 'running']);
  });
});
