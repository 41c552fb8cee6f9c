/**
 * The cloud's /mcp and a gateway's go through one door (core/mcp/http-door.ts):
 * a body either cannot take gets the same JSON-RPC error from both, GET and
 * DELETE the same 405, and the cloud checks Origin and Host as a gateway does,
 * with its own allow-lists (`cloud.allowedOrigins`, `cloud.allowedHosts`).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { MCP_BODY_LIMIT } from '../../core/mcp/http-door.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json' };
const BODIES: [string, string, string][] = [
  ['too large', `{"pad":"${'x'.repeat(MCP_BODY_LIMIT)}"}`, 'application/json'],
  ['not JSON', '{bad', 'application/json'],
  ['nested too deep', `${'['.repeat(100)}${']'.repeat(100)}`, 'application/json'],
  ['another media type', 'hello', 'text/plain'],
  ['a lone surrogate', '{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"list_machines","arguments":{"groupID":"x\\ud800"}}}', 'application/json'],
];

describe('the cloud\'s /mcp door', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let gw: TestGateway;

  beforeAll(async () => {
    cloud = await startTestCloud({ allowedOrigins: ['https://agents.example'], allowedHosts: ['cloud.example:8040'] });
    gw = await startTestGateway({ machines: [simMachine('M1')] });
  });
  afterAll(async () => {
    await gw?.stop();
    await cloud?.stop();
  });

  type Method = 'GET' | 'POST' | 'DELETE';
  const send = async (app: FastifyInstance, method: Method, headers: Record<string, string>, payload?: string) => {
    const res = await app.inject({ method, url: '/mcp', headers, ...(payload !== undefined ? { payload } : {}) });
    return { status: res.statusCode, allow: res.headers.allow, body: res.body };
  };
  const toCloud = (method: Method, headers: Record<string, string>, body?: string) => send(cloud.context.http, method, { host: 'cloud.example:8040', ...headers }, body);
  const toGateway = (method: Method, headers: Record<string, string>, body?: string) => send(gw.gateway.http, method, { ...headers, authorization: `Bearer ${gw.adminToken}` }, body);

  it('GW-85 a body the cloud cannot take gets the JSON-RPC error a gateway answers for it', async () => {
    for (const [what, body, type] of BODIES) {
      const headers = { ...MCP_HEADERS, 'content-type': type };
      const fromCloud = await toCloud('POST', { ...headers, accesstoken: 'cgw_nobody_x' }, body);
      const fromGateway = await toGateway('POST', headers, body);
      expect({ what, ...fromCloud }).toEqual({ what, ...fromGateway });
      expect(fromCloud.status, what).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(fromCloud.body), what).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    }
  });

  it('GW-32 GET and DELETE answer the 405 a gateway answers', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const fromCloud = await toCloud(method, {});
      expect(fromCloud).toEqual(await toGateway(method, {}));
      expect(fromCloud).toMatchObject({ status: 405, allow: 'POST' });
    }
  });

  it('GW-33 a browser Origin or a Host the cloud does not list is refused with 403 naming what it accepts', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const origin = await toCloud('POST', { ...MCP_HEADERS, origin: 'https://evil.example' }, list);
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).errorMsg).toContain("Origin 'https://evil.example' is not allowed for /mcp; accepted: https://agents.example");
    const host = await send(cloud.context.http, 'POST', { ...MCP_HEADERS, host: 'evil.example' }, list);
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).errorMsg).toContain("Host 'evil.example' is not allowed for /mcp; accepted: cloud.example:8040");
    const allowed = await toCloud('POST', { ...MCP_HEADERS, origin: 'https://agents.example' }, list);
    expect(allowed.status).toBe(200);
    expect(JSON.parse(allowed.body).result.tools.length).toBeGreaterThan(0);
  });
});
