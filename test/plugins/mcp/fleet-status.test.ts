import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { ANONYMOUS, type InterfaceEntry } from '../../../core/interfaces/registry.js';
import type { SimulatorClient } from '../../../drivers/simulator/client.js';
import type { SerialisedAnswer } from '../../../core/mcp/frozen-answers.js';
import { fleetStatus } from '../../../plugins/mcp/fleet-status.js';
import { createToolCaller, sectionMessage, type Section, type ToolCaller } from '../../../plugins/mcp/tool-runtime.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';

/**
 * get_fleet_status builds each entry from the sections its interfaces
 * answer. The first tests drive it with sections they control, change them
 * between calls, and require every answer to be exactly the JSON of the
 * entries as they are at that call (`expectedText`, the plain version kept
 * as the oracle). The last one runs it against a real gateway.
 */

interface Status {
  cncStatus: string;
  adjustedStatus: string;
  alarmStatus: boolean;
  alarmLevel: string;
  mode: string;
  programStatus: string;
  time: number;
}

function fleet(n: number) {
  const machines = Array.from({ length: n }, (_, i) => ({ machineID: `M${i}`, name: `Machine ${i}`, isActive: true }));
  const status = (i: number, time: number): Status => ({ cncStatus: 'STRT', adjustedStatus: 'RUNNING', alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: 'running', time: time + i });
  const tasks = machines.map((m, i) => ({ machineID: m.machineID, type: 'CNCStatus' as const, time: 1000, data: { status: status(i, 1000) } as { status?: Status }, error: null as { errorCode: number; errorMsg: string } | null, state: 'running', reason: 'running: executing a program', statusStale: false }));
  const health = machines.map((m) => ({ machineID: m.machineID, connection: { state: 'online', errorCode: 0, error: null as string | null, since: 1 } }));
  const denied = new Set<string>();
  const caller = {
    call: () => Promise.reject(new Error('not used')),
    body: () => Promise.reject(new Error('not used')),
    section: <T,>(entry: InterfaceEntry, input?: unknown): Promise<Section<T>> => {
      const { path } = entry;
      const given = input as Record<string, unknown> | undefined;
      if (denied.has(path)) {
        const error = new GatewayError('FORBIDDEN', `not allowed to call ${path}`);
        return Promise.resolve({ ok: false, message: sectionMessage(path, error), error, path });
      }
      const only = typeof given?.machineIDs === 'string' ? new Set(given.machineIDs.split(',')) : null;
      const pick = <R extends { machineID: string }>(rows: R[]) => (only ? rows.filter((r) => only.has(r.machineID)) : rows);
      const data = path === '/api/config/machines' ? machines : path === '/api/task/batchReadTaskData' ? pick(tasks) : path === '/api/task/batchReadErrors' ? pick(health) : path === '/api/config/group' ? { machineIDs: ['M2', 'M0'] } : undefined;
      return Promise.resolve({ ok: true, data: data as T });
    },
  } as ToolCaller;
  return { machines, tasks, health, denied, caller, status };
}

/** The answer built the plain way, from the sections as they are now: what the serialised answer must equal byte for byte. */
function expectedText(f: ReturnType<typeof fleet>, order = f.machines.map((m) => m.machineID), groupID?: string): string {
  const summary: Record<string, number> = { running: 0, idle: 0, alarm: 0, setup: 0, offline: 0, noData: 0, inactive: 0 };
  const entries = order.map((id) => {
    const m = f.machines.find((x) => x.machineID === id)!;
    const t = f.tasks.find((x) => x.machineID === id)!;
    const h = f.health.find((x) => x.machineID === id)!;
    summary[t.state] = (summary[t.state] ?? 0) + 1;
    const entry: Record<string, unknown> = { machineID: id, name: m.name, isActive: m.isActive };
    entry.connection = f.denied.has('/api/task/batchReadErrors')
      ? { error: sectionMessage('/api/task/batchReadErrors', new GatewayError('FORBIDDEN', 'not allowed to call /api/task/batchReadErrors')) }
      : { errorCode: h.connection.errorCode, state: h.connection.state, ...(h.connection.error ? { error: h.connection.error } : {}) };
    const s = t.data.status;
    if (s) entry.status = { cncStatus: s.cncStatus, adjustedStatus: s.adjustedStatus, alarmStatus: s.alarmStatus, alarmLevel: s.alarmLevel, mode: s.mode, programStatus: s.programStatus, time: s.time };
    else if (t.error) entry.statusError = `${t.error.errorMsg} (errorCode ${t.error.errorCode})`;
    Object.assign(entry, { state: t.state, reason: t.reason, statusStale: t.statusStale });
    return entry;
  });
  return JSON.stringify({ ...(groupID !== undefined ? { groupID } : {}), summary: { total: entries.length, ...summary }, machines: entries });
}

async function text(f: ReturnType<typeof fleet>, groupID?: string): Promise<string> {
  return JSON.stringify(await fleetStatus(f.caller, groupID));
}

describe('get_fleet_status from sections it does not control', () => {
  it('GW-53 every answer equals the entries as they are at that call, whatever changed in between', async () => {
    const f = fleet(50);
    expect(await text(f)).toBe(expectedText(f));
    expect(await text(f)).toBe(expectedText(f));

    // A new sample (a new object), a status changed in place (same object), an error instead of a status,
    // a derived state moving, and a connection dropping: each is seen at the next call.
    f.tasks[3]!.data = { status: f.status(3, 2000) };
    f.tasks[4]!.data.status!.mode = 'MDI';
    f.tasks[4]!.data.status!.time += 1;
    f.tasks[5]!.data = {};
    f.tasks[5]!.error = { errorCode: 1303, errorMsg: 'task not ready' };
    f.tasks[6]!.state = 'alarm';
    f.tasks[6]!.reason = 'alarm: an alarm of level alarm is active';
    f.health[7]!.connection = { state: 'reconnecting', errorCode: 1101, error: 'connection refused', since: 2 };
    f.tasks[7]!.statusStale = true;
    expect(await text(f)).toBe(expectedText(f));

    // Back as before: the answer follows again.
    f.tasks[6]!.state = 'running';
    f.tasks[6]!.reason = 'running: executing a program';
    f.health[7]!.connection = { state: 'online', errorCode: 0, error: null, since: 3 };
    expect(await text(f)).toBe(expectedText(f));
  });

  it('GW-53 rows frozen and replaced on a change, as the fleet gives them: each entry is serialised once while its rows stay, and the answer follows every replacement', async () => {
    const f = fleet(20);
    const freezeRows = () => {
      f.tasks.forEach((t, i) => (f.tasks[i] = Object.freeze({ ...t })));
      f.health.forEach((h, i) => (f.health[i] = Object.freeze({ ...h })));
    };
    freezeRows();
    const parts = async () => ((await fleetStatus(f.caller, undefined)) as SerialisedAnswer).parts;
    const first = await parts();
    const second = await parts();
    // The head (the summary) is made at each call; every machine's entry is the same bytes.
    expect(second.slice(1, -1).every((part, k) => part === first[k + 1])).toBe(true);
    expect(await text(f)).toBe(expectedText(f));

    f.tasks[3] = Object.freeze({ ...f.tasks[3]!, data: { status: f.status(3, 2000) } });
    f.tasks[6] = Object.freeze({ ...f.tasks[6]!, state: 'alarm', reason: 'alarm: an alarm of level alarm is active' });
    f.health[7] = Object.freeze({ ...f.health[7]!, connection: { state: 'reconnecting', errorCode: 1101, error: 'connection refused', since: 2 } });
    f.machines[9] = { ...f.machines[9]!, name: 'Mill "nine"' };
    expect(await text(f)).toBe(expectedText(f));
    const third = await parts();
    // Entries 3, 6, 7 and 9 are new bytes (parts alternate entry, comma); the rest are kept.
    const changed = first.slice(1, -1).flatMap((part, k) => (k % 2 === 0 && third[k + 1] !== part ? [k / 2] : []));
    expect(changed).toEqual([3, 6, 7, 9]);
  });

  it('GW-53 a renamed machine and a group filter give their own answers', async () => {
    const f = fleet(5);
    expect(await text(f)).toBe(expectedText(f));
    f.machines.splice(0, f.machines.length, ...f.machines.map((m) => (m.machineID === 'M1' ? { ...m, name: 'Lathe "one"\n' } : m)));
    expect(await text(f)).toBe(expectedText(f));
    expect(await text(f, 'cell')).toBe(expectedText(f, ['M2', 'M0'], 'cell'));
  });

  it('GW-53 GW-77 a forbidden section is a Forbidden: message in each entry and the others still return', async () => {
    const f = fleet(4);
    expect(await text(f)).toBe(expectedText(f));
    f.denied.add('/api/task/batchReadErrors');
    const answer = await text(f);
    expect(answer).toBe(expectedText(f));
    expect((JSON.parse(answer) as { machines: { connection: { error: string } }[] }).machines[0]!.connection.error).toMatch(/^Forbidden: /);
  });
});

describe('get_fleet_status on a real gateway', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      machines: [
        simMachine('A'),
        simMachine('B', { name: 'Lathe "B"\n' }),
        simMachine('OFF', { isActive: false }),
        simMachine('NOSTATUS', { tasks: { CNCStatus: { enabled: false } } }),
        simMachine('LOST', { connection: { backoffBaseMs: 5000, backoffMaxMs: 5000 } }),
      ],
      groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['LOST', 'A'] }],
    });
    await vi.waitFor(() => expect(gw.gateway.fleet.connectionState('LOST')).toBe('online'), { timeout: 5000, interval: 20 });
  });
  afterAll(() => gw.stop());

  const caller = () => createToolCaller(gw.gateway.context, gw.gateway.context.interfaces.accessPolicy.principalFor('admin') ?? ANONYMOUS, '127.0.0.1');
  const text = async (c: ToolCaller, groupID?: string) => JSON.stringify(await fleetStatus(c, groupID));

  it('GW-15 GW-53 every machine of a real gateway has its entry: inactive, without a status task, lost and renamed ones alike', async () => {
    (gw.gateway.fleet.client('LOST') as SimulatorClient).loseConnection();
    await vi.waitFor(() => expect(gw.gateway.fleet.connectionState('LOST')).not.toBe('online'), { timeout: 5000, interval: 20 });
    const machines = (JSON.parse(await text(caller())) as { machines: { machineID: string; state: string; name: string }[] }).machines;
    expect(Object.fromEntries(machines.map((m) => [m.machineID, m.state]))).toMatchObject({ OFF: 'inactive', NOSTATUS: 'noData' });
    expect(machines.find((m) => m.machineID === 'B')?.name).toBe('Lathe "B"\n');
    const cell = JSON.parse(await text(caller(), 'cell')) as { groupID: string; machines: { machineID: string }[] };
    expect([cell.groupID, cell.machines.map((m) => m.machineID)]).toEqual(['cell', ['LOST', 'A']]);
  });
});
