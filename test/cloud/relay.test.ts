/**
 * One cloud /mcp for three gateways on the embedded broker: each call runs
 * on the gateway its accessToken selects, with that gateway's principal
 * rules; no or an unknown token is the GW-86 text; a known token whose
 * gateway is not connected is GATEWAY_SERVICE_UNAVAILABLE at once; a
 * gateway that stops is unavailable at once and usable again after it
 * restarts; a large answer crosses the broker in parts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudRole } from '../../core/roles/cloud/role.js';
import { UNAUTHORIZED_TEXT } from '../../plugins/cloud-mcp/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';


describe('cloud relay on the embedded broker', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let cloudUrl: string;
  const gateways: Record<string, TestGateway> = {};
  const tokens: Record<string, string> = {};
  const sessions: McpSession[] = [];
  const gatewayDirs: Record<string, string> = {};

  const session = async (token?: string) => {
    const s = await connectMcp(cloudUrl, undefined, token === undefined ? {} : { accesstoken: token });
    sessions.push(s);
    return s;
  };
  const startGateway = async (name: string, machines: Record<string, unknown>[], extra: Record<string, unknown> = {}) => {
    gatewayDirs[name] ??= mkdtempSync(join(tmpdir(), `cloud-gw-${name}-`));
    gateways[name] = await startTestGateway({
      gateway: { name }, machines,
      cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: tokens[name], ...extra },
    }, gatewayDirs[name]);
  };
  const ownUrls: Record<string, Promise<string>> = {};
  /** The gateway's own HTTP address (listening once). */
  const ownUrl = (name: string) => (ownUrls[name] ??= gateways[name]!.gateway.listen({ host: '127.0.0.1', port: 0 }));
  const keyOf = async (name: string, username: string) => ((await gateways[name]!.request('POST', '/api/security/secret-key/create', { username })).body.data as { key: string }).key;
  const online = (name: string, want = true) => untilOnline(cloud, tokens[name] as string, want);

  beforeAll(async () => {
    cloud = await startTestCloud({ callDeadlineMs: 20_000 });
    cloudUrl = await cloud.listen('127.0.0.1', 0);
    for (const name of ['plant-a', 'plant-b', 'plant-c', 'plant-d']) tokens[name] = (await cloud.tokens.create(name)).token;
    await startGateway('plant-a', [simMachine('A1'), simMachine('A2')]);
    await startGateway('plant-b', [simMachine('B1')]);
    // plant-c answers as a user who may read the machines but not the groups.
    await startGateway('plant-c', Array.from({ length: 600 }, (_, i) => simMachine(`C${String(i).padStart(3, '0')}`, { tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } })), { user: 'cloud-reader' });
    await gateways['plant-c']!.request('POST', '/api/security/user/add', { username: 'cloud-reader', password: 'cloud-reader-password-1', authorizedApis: ['/api/config/machines'] });
    for (const name of ['plant-a', 'plant-b', 'plant-c']) await online(name);
  }, 60_000);
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    for (const gw of Object.values(gateways)) await gw.stop().catch(() => undefined);
    await cloud?.stop();
  });

  it('GW-06 GW-85 the accessToken selects the gateway that runs the tool, with the same tools as a gateway\'s own /mcp', async () => {
    const a = await session(tokens['plant-a']);
    const b = await session(tokens['plant-b']);
    const ids = (s: Awaited<ReturnType<McpSession['call']>>) => (s.json() as unknown as { machines: { machineID: string }[] }).machines.map((m) => m.machineID).sort();
    expect(ids(await a.call('list_machines'))).toEqual(['A1', 'A2']);
    expect(ids(await b.call('list_machines'))).toEqual(['B1']);
    const info = (await a.call('get_system_info')).json() as { gateway?: { name?: string } };
    expect(JSON.stringify(info)).toContain('plant-a');
    expect(JSON.stringify(info)).not.toMatch(/accessToken|cgw_/);
    // The same catalogue as the gateway's own /mcp.
    const own = await connectMcp(await ownUrl('plant-a'), gateways['plant-a']!.adminToken);
    sessions.push(own);
    expect((await a.client.listTools()).tools).toEqual((await own.client.listTools()).tools);
    expect((await a.call('read_machine', { machineID: 'A1', groupID: 'x' })).text).toBe((await own.call('read_machine', { machineID: 'A1', groupID: 'x' })).text);
  });

  it('GW-06 GW-85 all 13 tools answer through the cloud as they do on the gateway\'s own /mcp', async () => {
    const relayed = await session(tokens['plant-a']);
    const own = await connectMcp(await ownUrl('plant-a'), gateways['plant-a']!.adminToken);
    sessions.push(own);
    const m = { machineID: 'A1' };
    const calls: [string, Record<string, unknown>][] = [
      ['list_machines', {}], ['list_groups', {}], ['get_machine', m], ['get_fleet_status', {}], ['read_task_data', { type: 'CNCStatus', ...m }],
      ['read_machine', m], ['read_tool_life', m], ['list_programs', m], ['read_current_program', m], ['analyze', { kind: 'oee', start: 'today', ...m }],
      ['query_history', { type: 'State', start: 'today', ...m }], ['get_system_info', {}], ['get_error_log', {}],
    ];
    expect(new Set(calls.map(([name]) => name))).toEqual(new Set((await relayed.client.listTools()).tools.map((t) => t.name)));
    for (const [name, args] of calls) {
      const [viaCloud, direct] = [await relayed.call(name, args), await own.call(name, args)];
      expect(viaCloud.isError, `${name}: ${viaCloud.text.slice(0, 200)}`).toBe(false);
      expect(direct.isError, name).toBe(false);
      // Live values move between the two calls; the shape may not.
      expect(Object.keys(viaCloud.json() as object).sort(), name).toEqual(Object.keys(direct.json() as object).sort());
    }
  });

  it('GW-86 without a token, or with one the cloud does not know, a tool call answers the Unauthorized text; listing works without one', async () => {
    const none = await session();
    expect((await none.client.listTools()).tools).toHaveLength(13);
    expect(await none.call('list_machines')).toMatchObject({ text: UNAUTHORIZED_TEXT, isError: true });
    expect(UNAUTHORIZED_TEXT).toBe('Unauthorized: missing or unknown accessToken header.');
    const unknown = await session('cgw_0123456789ab_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(await unknown.call('list_machines')).toMatchObject({ text: UNAUTHORIZED_TEXT, isError: true });
    const garbage = await session('not a token');
    expect(await garbage.call('list_groups')).toMatchObject({ text: UNAUTHORIZED_TEXT, isError: true });
    const revoked = (await cloud.tokens.create('plant-x')).token;
    await cloud.tokens.revoke(revoked.split('_')[1] as string);
    expect(await (await session(revoked)).call('list_groups')).toMatchObject({ text: UNAUTHORIZED_TEXT, isError: true });
  });

  it('GW-87 a registered token whose gateway is not connected is GATEWAY_SERVICE_UNAVAILABLE at once, not after the deadline', async () => {
    const d = await session(tokens['plant-d']);
    const started = Date.now();
    const r = await d.call('list_groups');
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^\/api\/config\/groups failed: GATEWAY_SERVICE_UNAVAILABLE\(20001\) /);
    // The deadline is 20 s; "at once" is far below it.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('GW-87 a gateway that stops is unavailable at once; started again, it is usable without a restart of the cloud', async () => {
    const b = await session(tokens['plant-b']);
    await gateways['plant-b']!.stop();
    await online('plant-b', false);
    expect((await b.call('list_machines')).text).toMatch(/GATEWAY_SERVICE_UNAVAILABLE\(20001\)/);
    await startGateway('plant-b', [simMachine('B1')]);
    await online('plant-b');
    expect((await b.call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'B1' })] });
  });

  it('GW-77 a cloud call runs as the user the gateway chose; a large answer crosses the broker in parts and arrives whole', async () => {
    const c = await session(tokens['plant-c']);
    const machines = await c.call('list_machines');
    expect(machines.isError).toBe(false);
    expect(machines.text.length).toBeGreaterThan(64 * 1024);
    expect((machines.json() as { count: number }).count).toBe(600);
    // Byte for byte what the gateway's own dispatch answers for that user.
    const own = await connectMcp(await ownUrl('plant-c'), await keyOf('plant-c', 'cloud-reader'));
    sessions.push(own);
    expect(machines.text).toBe((await own.call('list_machines')).text);
    const groups = await c.call('list_groups');
    expect(groups).toMatchObject({ isError: true });
    expect(groups.text).toMatch(/^\/api\/config\/groups failed: FORBIDDEN\(5\)/);
  });

  it('GW-62 a relayed call\'s correlation id, led by the client\'s X-Correlation-Id, is in the gateway\'s error log', async () => {
    const traced = await connectMcp(cloudUrl, undefined, { accesstoken: tokens['plant-c'] as string, 'x-correlation-id': 'agent-run-42' });
    sessions.push(traced);
    expect((await traced.call('list_groups')).text).toMatch(/FORBIDDEN\(5\)/);
    expect((await traced.call('list_groups')).text).toMatch(/FORBIDDEN\(5\)/);
    const log = await gateways['plant-c']!.request('GET', '/api/log/error?limit=0');
    const rows = (log.body.data as { data: { path: string; correlationId?: string }[] }).data.filter((r) => r.correlationId?.startsWith('agent-run-42.'));
    expect(rows.map((r) => r.path)).toEqual(['/api/config/groups', '/api/config/groups']);
    // Two calls with one header stay two ids.
    expect(rows[0]?.correlationId).not.toBe(rows[1]?.correlationId);
    expect(rows[0]?.correlationId).toMatch(/^agent-run-42\.[0-9a-f]{16}$/);
    // A call on the gateway's own /mcp has none.
    const own = await connectMcp(await ownUrl('plant-c'), await keyOf('plant-c', 'cloud-reader'));
    sessions.push(own);
    await own.call('list_groups');
    const all = (await gateways['plant-c']!.request('GET', '/api/log/error?limit=1')).body.data as { data: Record<string, unknown>[] };
    expect(all.data[0]).toMatchObject({ path: '/api/config/groups' });
    expect(all.data[0]).not.toHaveProperty('correlationId');
  });
});
