import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { pino } from 'pino';
import { registerDriver } from '../../../../../core/driver-seam/driver.js';
import { GatewayError } from '../../../../../core/interfaces/errors.js';
import { DriverRegistry } from '../../../../../core/roles/gateway/fleet/driver-registry.js';
import { Fleet } from '../../../../../core/roles/gateway/fleet/fleet.js';
import { healthEntry, taskDataEntry } from '../../../../../core/roles/gateway/fleet/entries.js';
import { MAX_TOMBSTONES } from '../../../../../core/roles/gateway/fleet/rows.js';
import { machineConfigSchema, type MachineConfigInput } from '../../../../../core/roles/gateway/machine-config.js';
import { makeStatus, MemorySink, ScriptedClient } from '../../../../fixtures/scripted-client.js';

/**
 * The fleet's rows against the computation they replace: at every step of a
 * scripted fleet on a fake clock (connecting, online and sampling, a status
 * going stale, offline, back, a config change, a removal), each machine's
 * status and health rows equal the entries built from its snapshot at that
 * moment, and its serialised entry equals the get_fleet_status entry written
 * out here by hand.
 */

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);

/** A scripted client whose connection attempts take a while, so that `connecting` is seen. */
class SlowClient extends ScriptedClient {
  connectMs = 300;
  override async connect(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.connectMs));
    return super.connect();
  }
}

const clients = new Map<string, SlowClient>();
const scripted = registerDriver({
  scheme: 'scripted',
  description: 'scripted by the test',
  configSchema: z.record(z.string(), z.unknown()),
  create: (machine) => {
    const client = new SlowClient();
    clients.set(machine.machineID, client);
    return client;
  },
});

/** Every class sampled about once a second, each at its own times. */
const EVERY_SECOND = { CNCStatus: { intervalMs: 1000 }, Count: { intervalMs: 700 }, Cycle: { intervalMs: 1300 }, TimeData: { intervalMs: 900 }, ToolLife: { intervalMs: 1100 }, OEE: { intervalMs: 1000 } };
const machine = (machineID: string, extra: Partial<MachineConfigInput> = {}) =>
  machineConfigSchema.parse({ machineID, name: `Machine ${machineID}`, driver: 'scripted', tasks: EVERY_SECOND, connection: { backoffBaseMs: 500, backoffMaxMs: 2000, requestTimeoutMs: 600 }, ...extra });

let fleet: Fleet;
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  clients.clear();
  fleet = new Fleet({ drivers: new DriverRegistry([scripted]), sink: new MemorySink(), logger: pino({ level: 'silent' }), timeZone: 'UTC', heartbeatMs: 60_000, dataDir: '/nonexistent', now: () => Date.now() });
});
afterEach(async () => {
  await fleet.stop();
  vi.useRealTimers();
});

/** Every machine's rows equal what its snapshot gives now. */
function check(step: string): void {
  for (const id of fleet.ids()) {
    const rows = fleet.rows.get(id);
    const view = fleet.snapshot(id);
    expect(rows?.status, `${step}: ${id} status`).toEqual(taskDataEntry(view, 'CNCStatus'));
    expect(rows?.health, `${step}: ${id} health`).toEqual(healthEntry(view));
  }
}

/** Advances the clock in steps, checking after each. */
async function walk(ms: number, stepMs: number, step: string): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    await vi.advanceTimersByTimeAsync(stepMs);
    check(`${step} +${t + stepMs} ms`);
  }
}

/** Checks just before and exactly at the time the machine's status row said it holds until. */
async function checkAroundValidUntil(id: string, step: string): Promise<void> {
  const until = fleet.rows.get(id)!.validUntil;
  expect(until, `${step}: a row of a machine whose status ages has an end`).toBeLessThan(Infinity);
  vi.setSystemTime(until - 1);
  check(`${step}, 1 ms before validUntil`);
  vi.setSystemTime(until);
  check(`${step}, at validUntil`);
}

describe('fleet rows', () => {
  it('equal the entries built from each snapshot at every step, and the serialised entry equals get_fleet_status’s', async () => {
    await fleet.apply(machine('M1'));
    await fleet.apply(machine('OFF', { isActive: false }));
    await fleet.apply(machine('NOSTATUS', { tasks: { CNCStatus: { enabled: false } } }));
    check('applied');
    await walk(3000, 100, 'connecting, online, sampling');
    expect(fleet.rows.get('NOSTATUS')?.health.connection.state).toBe('online');
    expect(fleet.rows.get('M1')?.status.state).toBe('running');

    clients.get('M1')!.values.status = makeStatus({ adjustedStatus: 'STOPPED', programStatus: 'stopped', mode: 'MDI' });
    await walk(1500, 250, 'a new status sampled');
    expect(fleet.rows.get('M1')?.status.state).toBe('setup');

    // Every class fails for a while (not a link error, so the connection stays), then samples again.
    clients.get('M1')!.readError = new GatewayError('DRIVER_FAMILY_UNSUPPORTED', 'not today');
    await walk(2000, 100, 'every read failing');
    expect(Object.keys(fleet.rows.get('M1')!.health.tasks).sort()).toEqual(['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife']);
    clients.get('M1')!.readError = undefined;
    await walk(2000, 100, 'every read answering again');
    expect(fleet.rows.get('M1')?.health.tasks).toEqual({});

    // Reads hang: the status ages while the connection is still online, then the timeouts lose it.
    clients.get('M1')!.hang = true;
    await walk(2000, 100, 'reads hanging');
    await checkAroundValidUntil('M1', 'status ageing');
    // The link is gone and reconnecting fails: backoff, offline, the status stale and its age in the reason.
    clients.get('M1')!.hang = false;
    clients.get('M1')!.connectError = new GatewayError('MACHINE_NOT_CONNECTED', 'connection refused');
    clients.get('M1')!.loseLink('socket closed');
    await walk(8000, 100, 'offline');
    expect(fleet.rows.get('M1')?.status).toMatchObject({ state: 'offline', statusStale: true });
    for (let i = 0; i < 3; i++) await checkAroundValidUntil('M1', `offline, second ${i}`);

    clients.get('M1')!.connectError = undefined;
    await walk(4000, 100, 'back online');
    expect(fleet.rows.get('M1')?.status.state).toBe('setup');
    await walk(2000, 100, 'back online, every class sampled');
    expect(fleet.rows.get('M1')?.health.tasks).toEqual({});

    await fleet.apply(machine('M1', { name: 'Lathe "one"\n' }));
    check('renamed');
    await walk(2000, 100, 'renamed and running');
    await fleet.remove('NOSTATUS');
    check('removed');
    expect(fleet.rows.get('NOSTATUS')).toBeUndefined();
  });

  it('hand out the same row objects until the machine changes', async () => {
    await fleet.apply(machine('M1', { tasks: { CNCStatus: { intervalMs: 5000 } } }));
    await vi.advanceTimersByTimeAsync(6000);
    const a = fleet.rows.get('M1')!;
    const [status, health] = [a.status, a.health];
    expect(Object.isFrozen(status) && Object.isFrozen(health)).toBe(true);
    await vi.advanceTimersByTimeAsync(100);
    const b = fleet.rows.get('M1')!;
    expect(b.status).toBe(status);
    expect(b.health).toBe(health);
    await vi.advanceTimersByTimeAsync(5000);
    expect(fleet.rows.get('M1')!.status).not.toBe(status);
  });

  it('answer what changed since a revision: samples, health, time alone, removals', async () => {
    await fleet.apply(machine('A'));
    await fleet.apply(machine('B', { tasks: { CNCStatus: { enabled: false } } }));
    await vi.advanceTimersByTimeAsync(3000);
    const since = (ids = fleet.ids(), kind: 'status' | 'health' = 'status', revision = fleet.rows.revision) =>
      fleet.rows.changedSince(revision, ids, { kind, wholeFleet: true });
    const r0 = fleet.rows.revision;
    expect(since().rows).toEqual([]);
    // A's status is sampled every second; B has nothing that changes.
    await vi.advanceTimersByTimeAsync(1000);
    expect(since(undefined, 'status', r0).rows.map((r) => r.machineID)).toEqual(['A']);
    expect(since(undefined, 'health', r0).rows).toEqual([]);
    // A task error is a health change.
    const r1 = fleet.rows.revision;
    clients.get('A')!.readError = new GatewayError('DRIVER_FAMILY_UNSUPPORTED', 'no counter');
    await vi.advanceTimersByTimeAsync(1000);
    expect(since(undefined, 'health', r1).rows.map((r) => r.machineID)).toEqual(['A']);
    // Offline: only time changes the reason (the status's age), and each read after validUntil is a change.
    clients.get('A')!.readError = undefined;
    clients.get('A')!.connectError = new GatewayError('MACHINE_NOT_CONNECTED', 'refused');
    clients.get('A')!.loseLink();
    await vi.advanceTimersByTimeAsync(10_000);
    const before = fleet.rows.get('A')!;
    const r2 = fleet.rows.revision;
    vi.setSystemTime(before.validUntil);
    const later = since(['A'], 'status', r2);
    expect(later.rows.map((r) => [r.machineID, r.status.reason !== undefined])).toEqual([['A', true]]);
    expect(later.revision).toBeGreaterThan(r2);
    // A removal is reported once a whole fleet is asked, and not to a caller that named machines.
    const r3 = fleet.rows.revision;
    await fleet.remove('B');
    expect(since(['A'], 'status', r3).removed).toEqual(['B']);
    expect(fleet.rows.changedSince(r3, ['A'], { kind: 'status', wholeFleet: false }).removed).toEqual([]);
    // A machine added again is no longer removed.
    await fleet.apply(machine('B', { isActive: false }));
    expect(since(['A', 'B'], 'status', r3)).toMatchObject({ full: false, removed: [] });
    expect(since(['A', 'B'], 'status', r3).rows.map((r) => r.machineID)).toContain('B');
  });

  it('answer everything when the revision is from an earlier run, from the future, or older than the tombstones kept', async () => {
    await fleet.apply(machine('A', { isActive: false }));
    const revision = fleet.rows.revision;
    const ask = (r: number) => fleet.rows.changedSince(r, ['A'], { kind: 'status', wholeFleet: true });
    expect(ask(revision)).toMatchObject({ full: false, rows: [] });
    // The first revision of a run is taken from the clock, so an earlier run's revisions are older.
    expect(revision).toBeGreaterThanOrEqual(T0 * 1000);
    expect(ask(0)).toMatchObject({ full: true, removed: [] });
    expect(ask(0).rows.map((r) => r.machineID)).toEqual(['A']);
    expect(ask(revision + 1000).full).toBe(true);
    for (let i = 0; i < MAX_TOMBSTONES; i++) {
      await fleet.apply(machine(`X${i}`, { isActive: false }));
      await fleet.remove(`X${i}`);
    }
    expect(ask(revision)).toMatchObject({ full: false });
    expect(ask(revision).removed).toHaveLength(MAX_TOMBSTONES);
    await fleet.apply(machine('Y', { isActive: false }));
    await fleet.remove('Y');
    expect(ask(revision)).toMatchObject({ full: true, removed: [] });
  });
});
