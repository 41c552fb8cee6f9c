import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';

let gw: TestGateway;
let base: string;
let mcp: McpSession;

beforeAll(async () => {
  gw = await startTestGateway({
    machines: [
      simMachine('M1', { tasks: { CNCStatus: { enabled: true, intervalMs: 200 }, ToolLife: { enabled: true, intervalMs: 86_400_000 } } }),
      simMachine('M2', { driverOptions: { seed: 9, machineType: 'lathe', system: 'FANUC', families: ['status', 'alarm', 'count', 'timeData'] } }),
      simMachine('OFF', { isActive: false }),
    ],
    groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['M1', 'M2'] }],
  });
  base = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  mcp = await connectMcp(base, gw.adminToken);
  await vi.waitFor(async () => {
    const status = await gw.request('GET', '/api/task/readTaskData?type=CNCStatus&machineID=M1');
    expect(status.body.errorCode).toBe(0);
  }, { timeout: 5000, interval: 50 });
});

/** A tools/call POSTed by hand, for the exact response bytes. */
async function postToolCall(name: string, id: number): Promise<{ res: Response; raw: string }> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }),
  });
  expect(res.status).toBe(200);
  return { res, raw: await res.text() };
}

afterAll(async () => {
  await mcp?.close();
  await gw?.stop();
});

describe('MCP tools', () => {
  it('GW-02 GW-36 GW-35 tools/list lists exactly 13 tools, all read-only and idempotent', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['analyze', 'get_error_log', 'get_fleet_status', 'get_machine', 'get_system_info', 'list_groups', 'list_machines', 'list_programs', 'query_history', 'read_current_program', 'read_machine', 'read_task_data', 'read_tool_life'].sort(),
    );
    for (const t of tools) {
      expect([t.name, t.annotations?.readOnlyHint, t.annotations?.idempotentHint]).toEqual([t.name, true, true]);
      expect(t.description?.length).toBeGreaterThan(20);
    }
    const readTask = tools.find((t) => t.name === 'read_task_data');
    expect(JSON.stringify(readTask?.inputSchema)).toContain('GroupOEE');
  });

  it('GW-34 initialize carries instructions: call order, time forms, status meanings, error codes, reference URL', () => {
    const text = mcp.client.getInstructions() ?? '';
    expect(text).toContain('list_machines → get_fleet_status → read_machine / analyze / query_history');
    expect(text).toMatch(/-30m.*-24h.*-7d.*-2w/s);
    expect(text).toMatch(/today/);
    for (const s of ['running', 'idle', 'alarm', 'setup', 'offline', 'noData', 'inactive']) expect(text).toContain(`- ${s}:`);
    expect(text).toContain('GENERAL_MACHINE_ID_NOT_EXISTED(10003)');
    expect(text).toContain('TASK_NOT_READY(1303)');
    expect(text).toMatch(/Reference: http:\/\/127\.0\.0\.1:\d+\/api\/docs/);
  });

  it('GW-12 GW-50 list_machines returns compact identity rows', async () => {
    const r = await mcp.call('list_machines');
    expect(r.isError).toBe(false);
    const rows = r.json().machines as Record<string, unknown>[];
    expect(rows.map((m) => m.machineID)).toEqual(['M1', 'M2', 'OFF']);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual(['ip', 'isActive', 'machineID', 'machineType', 'model', 'name', 'port', 'system'].sort());
  });

  it('GW-50 GW-63 list_machines served from its frozen answer: the response bytes hold the text itself, and a fleet change gives a new answer', async () => {
    const post = async () => (await postToolCall('list_machines', 7)).raw;
    const first = await post();
    expect(first).not.toContain('frozen-answer-');
    const message = JSON.parse(first) as { id: number; result: { content: { type: string; text: string }[] } };
    expect(message.id).toBe(7);
    expect(message.result.content).toEqual([{ type: 'text', text: (await mcp.call('list_machines')).text }]);
    expect(await post()).toBe(first);

    await gw.request('POST', '/api/config/machine/update', { machineID: 'M2', name: 'Lathe "two"' });
    try {
      const changed = JSON.parse(JSON.parse(await post()).result.content[0].text as string) as { machines: { machineID: string; name: string }[] };
      expect(changed.machines.find((m) => m.machineID === 'M2')?.name).toBe('Lathe "two"');
    } finally {
      await gw.request('POST', '/api/config/machine/update', { machineID: 'M2', name: 'Machine M2' });
    }
  });

  it('GW-13 GW-51 list_groups returns groups with member machineIDs', async () => {
    const r = await mcp.call('list_groups');
    expect(r.json().groups).toEqual([{ groupID: 'cell', name: 'Cell', isActive: true, machineIDs: ['M1', 'M2'] }]);
  });

  it('GW-04 GW-63 GW-52 GW-14 get_machine returns the interface body as a JSON string, credentials excluded', async () => {
    await gw.request('POST', '/api/config/machine/update', { machineID: 'OFF', password: 'plc-secret-123', fileServerPassword: 'ftp-secret-456' });
    const r = await mcp.call('get_machine', { machineID: 'OFF' });
    const body = await gw.request('GET', '/api/config/machine?machineID=OFF');
    expect(JSON.parse(r.text)).toEqual(JSON.parse(body.raw));
    expect(r.text).not.toMatch(/plc-secret|ftp-secret|"password"|"fileServerPassword"/);
  });

  it('GW-15 GW-53 get_fleet_status gives connection, status, state with reason, statusStale and summary counts', async () => {
    const r = (await mcp.call('get_fleet_status')).json() as { summary: Record<string, number>; machines: Record<string, unknown>[] };
    expect(r.summary.total).toBe(3);
    expect(r.summary.inactive).toBe(1);
    const m1 = r.machines.find((m) => m.machineID === 'M1') as Record<string, unknown>;
    expect(m1.connection).toMatchObject({ errorCode: 0, state: 'online' });
    expect(Object.keys(m1.status as object).sort()).toEqual(['adjustedStatus', 'alarmLevel', 'alarmStatus', 'cncStatus', 'mode', 'programStatus', 'time'].sort());
    expect(m1.reason).toMatch(new RegExp(`^${String(m1.state)}: `));
    expect(m1.statusStale).toBe(false);
    const off = r.machines.find((m) => m.machineID === 'OFF') as Record<string, unknown>;
    expect(off.state).toBe('inactive');
    const cell = (await mcp.call('get_fleet_status', { groupID: 'cell' })).json() as { machines: { machineID: string }[] };
    expect(cell.machines.map((m) => m.machineID)).toEqual(['M1', 'M2']);
  });

  it('GW-53 GW-63 get_fleet_status built from kept entries: the response bytes are the JSON the SDK writes, and follow the caches', async () => {
    const post = async () => {
      const { res, raw } = await postToolCall('get_fleet_status', 9);
      expect(raw).not.toContain('frozen-answer-');
      // Canonical JSON.stringify output, as the SDK writes a message: nothing was spliced in out of place.
      expect(JSON.stringify(JSON.parse(raw))).toBe(raw);
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(raw));
      const message = JSON.parse(raw) as { id: number; result: { content: { text: string }[] } };
      expect(message.id).toBe(9);
      return JSON.parse(message.result.content[0]!.text) as { machines: { machineID: string; status?: { time: number } }[] };
    };
    const first = await post();
    expect(first.machines.map((m) => m.machineID)).toEqual(['M1', 'M2', 'OFF']);
    // M1 samples its status every 200 ms: a later answer carries its newer sample.
    await vi.waitFor(async () => {
      const later = await post();
      expect(later.machines[0]!.status!.time).toBeGreaterThan(first.machines[0]!.status!.time);
    }, { timeout: 3000, interval: 100 });
  });

  it('GW-54 GW-95 read_task_data: an invalid class lists the valid values; a not-ready task is a tool error (GW-91)', async () => {
    const bad = await mcp.call('read_task_data', { type: 'Banana', machineID: 'M1' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/INVALID_PARAMETER\(2\).*type.*CNCStatus.*ToolLife.*GroupOEE/);
    const ok = await mcp.call('read_task_data', { type: 'CNCStatus', machineID: 'M1' });
    const body = await gw.request('GET', '/api/task/readTaskData?type=CNCStatus&machineID=M1');
    expect(JSON.parse(ok.text).data.machineID).toBe('M1');
    expect(Object.keys(JSON.parse(ok.text))).toEqual(Object.keys(JSON.parse(body.raw)));
    const notReady = await mcp.call('read_task_data', { type: 'ToolLife', machineID: 'M1' });
    expect(notReady.isError).toBe(true);
    expect(notReady.text).toMatch(/^\/api\/task\/readTaskData failed: TASK_NOT_READY\(1303\) .*Hint: /);
  });

  it('GW-38 machineID and groupID together is a validation error listing the accepted forms', async () => {
    const r = await mcp.call('read_task_data', { type: 'CNCStatus', machineID: 'M1', groupID: 'cell' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/INVALID_PARAMETER\(2\).*exactly one of machineID \(from list_machines\) or groupID \(from list_groups\)/);
  });

  it('GW-55 read_machine reads status and alarm by default, each under its own key; failures go under errors', async () => {
    const r = (await mcp.call('read_machine', { machineID: 'M1' })).json();
    expect(Object.keys(r).sort()).toEqual(['alarm', 'machineID', 'status']);
    const partial = (await mcp.call('read_machine', { machineID: 'M2', items: ['status', 'position', 'toolNumber'] })).json() as { status: unknown; errors: Record<string, string> };
    expect(partial.status).toBeDefined();
    expect(Object.keys(partial.errors).sort()).toEqual(['position', 'toolNumber']);
    expect(partial.errors.position).toMatch(/DRIVER_FAMILY_UNSUPPORTED\(2001\)/);
    const unknownItem = await mcp.call('read_machine', { machineID: 'M1', items: ['status', 'coffee'] });
    expect(unknownItem.isError).toBe(true);
    expect(unknownItem.text).toMatch(/items\[1\].*"status"\|"alarm"\|"position"/);
  });

  it('GW-92 GW-94 an unknown or inactive machineID is GENERAL_MACHINE_ID_NOT_EXISTED(10003) with a hint to list_machines', async () => {
    for (const [tool, args] of [
      ['get_machine', { machineID: 'NOPE' }],
      ['read_machine', { machineID: 'NOPE' }],
      ['read_machine', { machineID: 'OFF' }],
      ['list_programs', { machineID: 'OFF' }],
    ] as const) {
      const r = await mcp.call(tool, args);
      expect([tool, r.isError]).toEqual([tool, true]);
      expect(r.text).toMatch(/^\/api\/[a-zA-Z/]+ failed: GENERAL_MACHINE_ID_NOT_EXISTED\(10003\) Unknown or inactive machineID\. .*Hint: Call list_machines/);
    }
  });

  it('GW-56 GW-57 read_tool_life and list_programs pass their interfaces through', async () => {
    const tools = JSON.parse((await mcp.call('read_tool_life', { machineID: 'M1' })).text) as { data: { tools: unknown[] } };
    expect(tools.data.tools.length).toBeGreaterThan(0);
    const detailed = JSON.parse((await mcp.call('read_tool_life', { machineID: 'M1', detailed: true })).text) as { data: { tools: Record<string, unknown>[] } };
    expect(Object.keys(detailed.data.tools[0] ?? {}).length).toBeGreaterThan(Object.keys((tools.data.tools[0] as object) ?? {}).length);
    const programs = JSON.parse((await mcp.call('list_programs', { machineID: 'M1' })).text) as { data: { programs: unknown[] } };
    expect(programs.data.programs.length).toBeGreaterThan(0);
  });

  it('GW-58 read_current_program cuts content at maxChars and flags truncated with totalChars; 0 means unlimited', async () => {
    const full = (await mcp.call('read_current_program', { machineID: 'M1', maxChars: 0 })).json() as { content: string; truncated: boolean; totalChars: number; name: string };
    expect(full.truncated).toBe(false);
    expect(full.content.length).toBe(full.totalChars);
    expect(full.name).toMatch(/^O\d+/);
    const cut = (await mcp.call('read_current_program', { machineID: 'M1', maxChars: 10 })).json() as { content: string; truncated: boolean; totalChars: number };
    expect([cut.content.length, cut.truncated, cut.totalChars]).toEqual([10, true, full.totalChars]);
    const byDefault = (await mcp.call('read_current_program', { machineID: 'M1' })).json() as { truncated: boolean };
    expect(byDefault.truncated).toBe(full.totalChars > 20000);
  });

  it('GW-61 GW-14 get_system_info returns the sections; includeNetwork adds network; no accessToken', async () => {
    const r = (await mcp.call('get_system_info')).json();
    expect(Object.keys(r).sort()).toEqual(['core', 'gateway', 'hardware', 'license', 'services', 'time']);
    expect(JSON.stringify(r)).not.toMatch(/accessToken/);
    const withNet = (await mcp.call('get_system_info', { includeNetwork: true })).json();
    expect(withNet.network).toBeDefined();
  });

  it('GW-62 get_error_log returns {window, total, returned, truncated, data}', async () => {
    await gw.request('GET', '/api/config/machine?machineID=ZZZ');
    const r = (await mcp.call('get_error_log', { limit: 1 })).json();
    expect(Object.keys(r).sort()).toEqual(['data', 'returned', 'total', 'truncated', 'window']);
    expect(r.returned).toBe(1);
    expect(Object.keys(r.window as object).sort()).toEqual(['end', 'endUnix', 'start', 'startUnix', 'timeZone']);
  });

  it('GW-95 an invalid time form is a tool error listing the accepted forms', async () => {
    const r = await mcp.call('get_error_log', { start: 'last tuesday' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/INVALID_PARAMETER\(2\).*start.*-30m.*today/);
  });
});

describe('MCP analysis and history tools', () => {
  beforeAll(async () => {
    await gw.gateway.context.history.flush();
  });

  it('GW-59 GW-16 analyze returns {kind, machineID or groupID, window, data}; interval splits the window', async () => {
    const r = (await mcp.call('analyze', { kind: 'overall', machineID: 'M1', start: '-2h', interval: 3600 })).json();
    expect(Object.keys(r).sort()).toEqual(['data', 'kind', 'machineID', 'window']);
    expect(r.kind).toBe('overall');
    expect(Object.keys(r.window as object).sort()).toEqual(['end', 'endUnix', 'start', 'startUnix', 'timeZone']);
    expect(JSON.stringify(r.data)).toContain('intervals');
    const group = (await mcp.call('analyze', { kind: 'count', groupID: 'cell', start: 'today' })).json();
    expect(group.groupID).toBe('cell');
  });

  it('GW-59 GW-95 analyze refuses a window of 31 days or more, and an invalid kind, listing what is accepted', async () => {
    const long = await mcp.call('analyze', { kind: 'oee', machineID: 'M1', start: '-31d' });
    expect(long.isError).toBe(true);
    expect(long.text).toMatch(/INVALID_PARAMETER\(2\).*shorter than 31 days/);
    const kind = await mcp.call('analyze', { kind: 'vibes', machineID: 'M1', start: '-1h' });
    expect(kind.isError).toBe(true);
    expect(kind.text).toMatch(/"oee"\|"alarm"\|"count"\|"cycle"\|"overall"/);
  });

  it('GW-60 GW-37 query_history is oldest first with limit 200 by default and returns the documented shape', async () => {
    const r = (await mcp.call('query_history', { type: 'State', machineID: 'M1', start: 'today' })).json() as Record<string, unknown>;
    expect(Object.keys(r).sort()).toEqual(['count', 'data', 'limitReached', 'machineID', 'order', 'type', 'window']);
    expect([r.type, r.order]).toEqual(['State', 'oldestFirst']);
    const rows = r.data as { time: number }[];
    expect(rows.length).toBeGreaterThan(0);
    for (let i = 1; i < rows.length; i++) expect((rows[i] as { time: number }).time).toBeGreaterThanOrEqual((rows[i - 1] as { time: number }).time);
  });

  it('GW-60 GW-65 newestFirst returns the most recent rows first, through /api/db/query', async () => {
    const r = (await mcp.call('query_history', { type: 'Heartbeat', groupID: 'cell', start: 'today', limit: 1, newestFirst: true })).json() as Record<string, unknown>;
    expect(Object.keys(r).sort()).toEqual(['count', 'data', 'groupID', 'limitReached', 'order', 'type', 'window']);
    expect(r.order).toBe('newestFirst');
    const all = (await mcp.call('query_history', { type: 'State', machineID: 'M1', start: 'today', newestFirst: true })).json() as { data: { time: number }[] };
    for (let i = 1; i < all.data.length; i++) expect((all.data[i] as { time: number }).time).toBeLessThanOrEqual((all.data[i - 1] as { time: number }).time);
  });
});

describe('MCP authorisation of query_history', () => {
  it('GW-65 with security control on, newestFirst needs the caller to be authorised for /api/db/query', async () => {
    await gw.request('POST', '/api/security/user/add', { username: 'historian', password: 'historian-password-1', authorizedApis: ['/api/history/machine'] });
    const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'historian' })).body.data as { key: string }).key;
    const session = await connectMcp(base, key);
    const oldest = await session.call('query_history', { type: 'State', machineID: 'M1', start: 'today' });
    expect(oldest.isError).toBe(false);
    const newest = await session.call('query_history', { type: 'State', machineID: 'M1', start: 'today', newestFirst: true });
    expect(newest.isError).toBe(true);
    expect(newest.text).toMatch(/^\/api\/db\/query failed: FORBIDDEN\(5\)/);
    await session.close();
  });
});
