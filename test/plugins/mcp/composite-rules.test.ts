/**
 * Rules about composite tools and error codes, generated over every section
 * of every composite tool: a user missing exactly one of a tool's interfaces
 * gets that section as a `Forbidden:` message and every other section
 * returned. And each tool failure carries the errorCode HTTP gives for the
 * same call.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';
import { READ_MACHINE_ITEMS, SYSTEM_SECTIONS } from '../../../plugins/mcp/tools.js';

let gw: TestGateway;
let base: string;
let admin: McpSession;
let userCount = 0;

beforeAll(async () => {
  gw = await startTestGateway({
    machines: [simMachine('M1', { tasks: { CNCStatus: { enabled: true, intervalMs: 200 } } }), simMachine('M2')],
    groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['M1', 'M2'] }],
  });
  base = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  admin = await connectMcp(base, gw.adminToken);
  await vi.waitFor(async () => expect((await gw.request('GET', '/api/task/readTaskData?type=CNCStatus&machineID=M1')).body.errorCode).toBe(0), { timeout: 5000, interval: 50 });
});

afterAll(async () => {
  await admin?.close();
  await gw?.stop();
});

/** A secret key for a new non-administrator authorised for exactly `apis`. */
async function keyFor(apis: string[]): Promise<string> {
  const username = `user${++userCount}`;
  const added = await gw.request('POST', '/api/security/user/add', { username, password: `${username}-password-1`, authorizedApis: apis });
  expect(added.status).toBe(200);
  return ((await gw.request('POST', '/api/security/secret-key/create', { username })).body.data as { key: string }).key;
}

/** Calls one tool as a user authorised for `apis`. */
async function callAs(apis: string[], tool: string, args: Record<string, unknown>) {
  const session = await connectMcp(base, await keyFor(apis));
  try {
    return await session.call(tool, args);
  } finally {
    await session.close();
  }
}

const forbidden = (path: string) => new RegExp(`^Forbidden: ${path.replace(/\//g, '\\/')} failed: FORBIDDEN\\(5\\)`);

describe('composite tools report per section', () => {
  const systemPaths = Object.entries(SYSTEM_SECTIONS).map(([section, entry]) => [section, entry.path] as const);
  for (const [section, path] of systemPaths) {
    it(`GW-64 GW-96 GW-77 get_system_info without ${path}: ${section} is a Forbidden: message, the other sections return`, async () => {
      const r = await callAs(systemPaths.filter(([, p]) => p !== path).map(([, p]) => p), 'get_system_info', {});
      expect(r.isError).toBe(false);
      const body = r.json() as Record<string, unknown> & { errors?: Record<string, string> };
      expect(Object.keys(body.errors ?? {})).toEqual([section]);
      expect(body.errors?.[section]).toMatch(forbidden(path));
      for (const [other] of systemPaths) if (other !== section) expect([other, typeof body[other]]).toEqual([other, 'object']);
      expect(body[section]).toBeUndefined();
    });
  }

  const itemPaths = Object.entries(READ_MACHINE_ITEMS).map(([item, entry]) => [item, entry.path] as const);
  for (const [item, path] of itemPaths) {
    it(`GW-64 GW-96 GW-77 read_machine without ${path}: ${item} is a Forbidden: message, the other items return`, async () => {
      const r = await callAs(itemPaths.filter(([, p]) => p !== path).map(([, p]) => p), 'read_machine', { machineID: 'M1', items: Object.keys(READ_MACHINE_ITEMS) });
      expect(r.isError).toBe(false);
      const body = r.json() as Record<string, unknown> & { errors?: Record<string, string> };
      expect(Object.keys(body.errors ?? {})).toEqual([item]);
      expect(body.errors?.[item]).toMatch(forbidden(path));
      for (const [other] of itemPaths) if (other !== item) expect([other, body[other] !== undefined]).toEqual([other, true]);
    });
  }

  const fleetPaths = ['/api/config/machines', '/api/task/batchReadTaskData', '/api/task/batchReadErrors'];
  type Entry = { machineID: string; status?: unknown; statusError?: string; connection: { errorCode?: number; error?: string } };
  it('GW-64 GW-96 GW-15 get_fleet_status without the machine list: errors.machines, entries still carry status and connection', async () => {
    const r = await callAs(fleetPaths.filter((p) => p !== '/api/config/machines'), 'get_fleet_status', {});
    const body = r.json() as { machines: Entry[]; errors?: Record<string, string> };
    expect(body.errors?.machines).toMatch(forbidden('/api/config/machines'));
    expect(body.machines.map((m) => m.machineID).sort()).toEqual(['M1', 'M2']);
    const m1 = body.machines.find((m) => m.machineID === 'M1');
    expect(m1?.status).toBeDefined();
    expect(m1?.connection.errorCode).toBe(0);
  });

  it('GW-64 GW-96 GW-15 get_fleet_status without the status interface: statusError per entry, connection still returns', async () => {
    const r = await callAs(fleetPaths.filter((p) => p !== '/api/task/batchReadTaskData'), 'get_fleet_status', {});
    const body = r.json() as { machines: Entry[] };
    expect(body.machines).toHaveLength(2);
    for (const m of body.machines) {
      expect(m.statusError).toMatch(forbidden('/api/task/batchReadTaskData'));
      expect(m.status).toBeUndefined();
      expect(m.connection.errorCode).toBe(0);
    }
  });

  it('GW-64 GW-96 GW-15 get_fleet_status without the health interface: connection.error per entry, status still returns', async () => {
    const r = await callAs(fleetPaths.filter((p) => p !== '/api/task/batchReadErrors'), 'get_fleet_status', {});
    const body = r.json() as { machines: Entry[] };
    const m1 = body.machines.find((m) => m.machineID === 'M1');
    expect(m1?.status).toBeDefined();
    for (const m of body.machines) expect(m.connection.error).toMatch(forbidden('/api/task/batchReadErrors'));
  });

  it('GW-64 list_machines and list_groups return compact rows, not the configurations', async () => {
    const machines = (await admin.call('list_machines')).json() as { machines: Record<string, unknown>[] };
    for (const row of machines.machines) expect(Object.keys(row).sort()).toEqual(['ip', 'isActive', 'machineID', 'machineType', 'model', 'name', 'port', 'system']);
    const groups = (await admin.call('list_groups')).json() as { groups: Record<string, unknown>[] };
    for (const row of groups.groups) expect(Object.keys(row).sort()).toEqual(['groupID', 'isActive', 'machineIDs', 'name']);
  });
});

/** `NAME(code)` of a tool error text. */
function toolErrorCode(text: string): number {
  const match = /^\S+ failed: [A-Z_]+\((\d+)\)/.exec(text);
  if (!match) throw new Error(`not a tool error: ${text.slice(0, 200)}`);
  return Number(match[1]);
}

describe('error codes through MCP', () => {
  /** The same failing call as a tool call and as an HTTP request. */
  const cases: { name: string; tool: string; args: Record<string, unknown>; http: string }[] = [
    { name: 'unknown machine (get_machine)', tool: 'get_machine', args: { machineID: 'NOPE' }, http: '/api/config/machine?machineID=NOPE' },
    { name: 'unknown machine (read_task_data)', tool: 'read_task_data', args: { type: 'CNCStatus', machineID: 'NOPE' }, http: '/api/task/readTaskData?type=CNCStatus&machineID=NOPE' },
    { name: 'task not enabled (read_task_data)', tool: 'read_task_data', args: { type: 'OEE', machineID: 'M2' }, http: '/api/task/readTaskData?type=OEE&machineID=M2' },
    { name: 'invalid class (read_task_data)', tool: 'read_task_data', args: { type: 'Bogus', machineID: 'M1' }, http: '/api/task/readTaskData?type=Bogus&machineID=M1' },
    { name: 'unknown group (read_task_data)', tool: 'read_task_data', args: { type: 'GroupCount', groupID: 'NOPE' }, http: '/api/task/readGroupTaskData?type=GroupCount&groupID=NOPE' },
    { name: 'unknown machine (read_tool_life)', tool: 'read_tool_life', args: { machineID: 'NOPE' }, http: '/api/cnc/readToolLife?machineID=NOPE' },
    { name: 'unknown machine (list_programs)', tool: 'list_programs', args: { machineID: 'NOPE' }, http: '/api/cnc/readProgramList?machineID=NOPE' },
    { name: 'unknown machine (analyze)', tool: 'analyze', args: { kind: 'oee', machineID: 'NOPE', start: 'today' }, http: '/api/analysis/machine?kind=oee&machineID=NOPE&start=today' },
    { name: 'bad time form (analyze)', tool: 'analyze', args: { kind: 'oee', machineID: 'M1', start: 'soon' }, http: '/api/analysis/machine?kind=oee&machineID=M1&start=soon' },
    { name: 'unknown machine (query_history)', tool: 'query_history', args: { type: 'State', machineID: 'NOPE', start: 'today' }, http: '/api/history/machine?type=State&machineID=NOPE&start=today' },
    { name: 'unknown class (query_history)', tool: 'query_history', args: { type: 'Nothing', machineID: 'M1', start: 'today' }, http: '/api/history/machine?type=Nothing&machineID=M1&start=today' },
  ];
  for (const c of cases) {
    it(`GW-93 GW-92 ${c.name}: the tool error carries the errorCode HTTP answers`, async () => {
      const http = await gw.request('GET', c.http);
      expect(http.body.errorCode).not.toBe(0);
      const tool = await admin.call(c.tool, c.args);
      expect(tool.isError).toBe(true);
      expect([c.name, toolErrorCode(tool.text)]).toEqual([c.name, http.body.errorCode]);
    });
  }

  it('GW-93 a forbidden interface is FORBIDDEN(5) over MCP, as its HTTP answer gives errorCode 5', async () => {
    const key = await keyFor(['/api/config/machines']);
    const http = await gw.request('GET', '/api/config/machine?machineID=M1', undefined, { token: key });
    expect([http.status, http.body.errorCode]).toEqual([403, 5]);
    const session = await connectMcp(base, key);
    const tool = await session.call('get_machine', { machineID: 'M1' });
    await session.close();
    expect(toolErrorCode(tool.text)).toBe(5);
  });
});

describe('newest-first history: one rule for HTTP and MCP', () => {
  const historyOnly = ['/api/history/machine', '/api/history/group', '/api/config/group'];

  it('GW-65 without /api/db/query, newestFirst is refused over HTTP and over MCP alike; oldest first is allowed on both', async () => {
    const key = await keyFor(historyOnly);
    for (const [path, target] of [['/api/history/machine', 'machineID=M1'], ['/api/history/group', 'groupID=cell']] as const) {
      const oldest = await gw.request('GET', `${path}?type=Heartbeat&${target}&start=today`, undefined, { token: key });
      expect([path, oldest.status]).toEqual([path, 200]);
      const newest = await gw.request('GET', `${path}?type=Heartbeat&${target}&start=today&newestFirst=true`, undefined, { token: key });
      expect([path, newest.status, newest.body.errorCode]).toEqual([path, 403, 5]);
      expect(newest.body.errorMsg).toContain('/api/db/query');
    }
    const session = await connectMcp(base, key);
    try {
      for (const target of [{ machineID: 'M1' }, { groupID: 'cell' }]) {
        expect((await session.call('query_history', { type: 'Heartbeat', start: 'today', ...target })).isError).toBe(false);
        const newest = await session.call('query_history', { type: 'Heartbeat', start: 'today', newestFirst: true, ...target });
        expect(newest.isError).toBe(true);
        expect(toolErrorCode(newest.text)).toBe(5);
      }
    } finally {
      await session.close();
    }
  });

  it('GW-65 with /api/db/query as well, newestFirst works over HTTP and over MCP', async () => {
    const key = await keyFor([...historyOnly, '/api/db/query']);
    const http = await gw.request('GET', '/api/history/machine?type=Heartbeat&machineID=M1&start=today&newestFirst=true', undefined, { token: key });
    expect([http.status, (http.body.data as { order: string }).order]).toEqual([200, 'newestFirst']);
    const session = await connectMcp(base, key);
    try {
      const r = await session.call('query_history', { type: 'Heartbeat', machineID: 'M1', start: 'today', newestFirst: true });
      expect([r.isError, r.json().order]).toEqual([false, 'newestFirst']);
    } finally {
      await session.close();
    }
  });
});
