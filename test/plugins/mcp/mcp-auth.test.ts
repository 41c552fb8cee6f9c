import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp } from '../../fixtures/mcp-client.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A raw JSON-RPC POST to /mcp, optionally from another loopback source address. */
function post(base: string, body: unknown, headers: Record<string, string> = {}, localAddress?: string, method = 'POST') {
  const url = new URL('/mcp', base);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        ...(localAddress ? { localAddress } : {}),
        headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify(body) : undefined);
  });
}

async function start(raw: Record<string, unknown> = {}) {
  gw = await startTestGateway({ machines: [simMachine('M1')], ...raw });
  const base = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  return { g: gw, base };
}

async function userWith(g: TestGateway, apis: string[]) {
  await g.request('POST', '/api/security/user/add', { username: 'agent', password: 'agent-password-1', authorizedApis: apis });
  const created = await g.request('POST', '/api/security/secret-key/create', { username: 'agent' });
  return (created.body.data as { key: string }).key;
}

describe('MCP access', () => {
  it('GW-78 GW-97 missing or invalid credentials get HTTP 401 before any JSON-RPC is handled', async () => {
    const { base } = await start();
    const none = await post(base, INIT);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text)).toMatchObject({ errorCode: 3 });
    const bad = await post(base, INIT, { authorization: 'Bearer gwk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    expect([bad.status, JSON.parse(bad.text).errorCode]).toEqual([401, 4]);
    expect(bad.text).not.toContain('jsonrpc');
  });

  it('GW-72 GW-78 a secret key works as Authorization: Bearer, like a JWT', async () => {
    const { g, base } = await start();
    const key = await userWith(g, ['/api/config/machines']);
    const session = await connectMcp(base, key);
    const r = await session.call('list_machines');
    expect(r.isError).toBe(false);
    await session.close();
  });

  it('GW-79 with security control off, tools can be called without authentication', async () => {
    const { g, base } = await start();
    await g.request('POST', '/api/security/settings/update', { securityControl: false });
    const session = await connectMcp(base);
    expect((await session.call('list_machines')).isError).toBe(false);
    await session.close();
  });

  it('GW-81 GW-82 GW-83 GW-97 the IP white list applies to /mcp: a secret key from outside gets 401 errorCode 7; a JWT is exempt', async () => {
    const { g, base } = await start();
    const key = await userWith(g, ['/api/config/machines']);
    await g.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['127.0.0.1'] });
    const outside = await post(base, INIT, { authorization: `Bearer ${key}` }, '127.0.0.2');
    expect(outside.status).toBe(401);
    expect(JSON.parse(outside.text)).toMatchObject({ errorCode: 7, errorMsg: 'IP not in white list.' });
    const inside = await post(base, INIT, { authorization: `Bearer ${key}` }, '127.0.0.1');
    expect(inside.status).toBe(200);
    const jwt = await post(base, INIT, { authorization: `Bearer ${g.adminToken}` }, '127.0.0.2');
    expect(jwt.status).toBe(200);
  });

  it('GW-76 GW-77 each interface a composite tool calls is authorised on its own; refused sections say Forbidden:', async () => {
    const { g, base } = await start();
    const key = await userWith(g, ['/api/config/machines', '/api/task/batchReadTaskData', '/api/cnc/readCNCStatusDetails', '/api/system/info']);
    const session = await connectMcp(base, key);
    const fleet = (await session.call('get_fleet_status')).json() as { machines: { connection: { error?: string }; state?: string }[] };
    expect(fleet.machines[0]?.connection.error).toMatch(/^Forbidden: \/api\/task\/batchReadErrors failed: FORBIDDEN\(5\)/);
    expect(fleet.machines[0]?.state).toBeDefined();
    const machine = (await session.call('read_machine', { machineID: 'M1' })).json() as { status?: unknown; errors: Record<string, string> };
    expect(machine.status).toBeDefined();
    expect(machine.errors.alarm).toMatch(/^Forbidden: \/api\/cnc\/readAlarm failed: FORBIDDEN\(5\)/);
    const system = (await session.call('get_system_info')).json() as { core?: unknown; errors: Record<string, string> };
    expect(system.core).toBeDefined();
    expect(Object.keys(system.errors).sort()).toEqual(['gateway', 'hardware', 'license', 'services', 'time']);
    expect(Object.values(system.errors).every((m) => m.startsWith('Forbidden: '))).toBe(true);
    const single = await session.call('get_machine', { machineID: 'M1' });
    expect(single.isError).toBe(true);
    expect(single.text).toMatch(/^\/api\/config\/machine failed: FORBIDDEN\(5\) /);
    await session.close();
  });

  it('DNS-rebinding protection: a foreign Origin gets 403; an allowed one passes', async () => {
    const { g, base } = await start({ mcp: { allowedOrigins: ['https://dashboard.plant.example'] } });
    const evil = await post(base, INIT, { authorization: `Bearer ${g.adminToken}`, origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.text).toContain("Origin 'https://evil.example' is not allowed");
    const good = await post(base, INIT, { authorization: `Bearer ${g.adminToken}`, origin: 'https://dashboard.plant.example' });
    expect(good.status).toBe(200);
  });

  it('DNS-rebinding protection: with allowedHosts set, another Host header gets 403', async () => {
    const { g, base } = await start({ mcp: { allowedHosts: ['gateway-01:8080'] } });
    const r = await post(base, INIT, { authorization: `Bearer ${g.adminToken}` });
    expect(r.status).toBe(403);
    const ok = await post(base, INIT, { authorization: `Bearer ${g.adminToken}`, host: 'gateway-01:8080' });
    expect(ok.status).toBe(200);
  });

  it('GW-32 GW-33 stateless: GET and DELETE answer 405, and a request needs no session from an earlier one', async () => {
    const { g, base } = await start();
    const auth = { authorization: `Bearer ${g.adminToken}` };
    expect((await post(base, undefined, auth, undefined, 'GET')).status).toBe(405);
    expect((await post(base, undefined, auth, undefined, 'DELETE')).status).toBe(405);
    const init = await post(base, INIT, auth);
    expect(init.status).toBe(200);
    expect(JSON.parse(init.text).result.serverInfo.name).toBe('cnc-machine-gateway');
    const list = await post(base, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { ...auth, 'mcp-protocol-version': '2025-06-18' });
    expect(list.status).toBe(200);
    expect(JSON.parse(list.text).result.tools).toHaveLength(13);
  });

  it('the MCP-Protocol-Version header is checked: an unsupported version is refused', async () => {
    const { g, base } = await start();
    const r = await post(base, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { authorization: `Bearer ${g.adminToken}`, 'mcp-protocol-version': '1999-01-01' });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/Unsupported protocol version/i);
  });
});
