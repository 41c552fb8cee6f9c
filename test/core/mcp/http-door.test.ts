/**
 * The one MCP door (core/mcp/http-door.ts) on a bare app: the checks it
 * makes before the body, the body errors, the 405s, and which of the fast
 * path and the SDK server answers a request.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { installJsonBodyParser } from '../../../core/http/json-body.js';
import { MCP_BODY_LIMIT, serveMcpDoor, type McpDoorOptions } from '../../../core/mcp/http-door.js';

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app with the door at /mcp; `served` counts the SDK servers built. */
async function door(options: Partial<McpDoorOptions> = {}) {
  const served = { servers: 0 };
  app = Fastify({ logger: false });
  installJsonBodyParser(app);
  serveMcpDoor(app, {
    path: '/mcp',
    allowedOrigins: [],
    allowedHosts: [],
    noOriginsText: 'no browser origins (configure x.allowedOrigins)',
    server(_request, { jsonSchemaValidator }) {
      served.servers++;
      const server = new Server({ name: 'door-test', version: '1' }, { capabilities: { tools: {} }, jsonSchemaValidator });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
      return { server, splices: new Map() };
    },
    ...options,
  });
  await app.ready();
  return { app, served };
}

describe('the MCP door', () => {
  it('GW-33 a foreign Origin or Host is refused with 403 before the body, naming what is accepted', async () => {
    const { app, served } = await door({ allowedHosts: ['gw:8080'] });
    const origin = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, host: 'gw:8080', origin: 'https://evil.example' }, payload: LIST });
    expect(origin.statusCode).toBe(403);
    expect(origin.json()).toMatchObject({ errorCode: 5, errorMsg: expect.stringContaining("Origin 'https://evil.example' is not allowed for /mcp; accepted: no browser origins (configure x.allowedOrigins)") });
    const host = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, host: 'evil:80' }, payload: LIST });
    expect(host.statusCode).toBe(403);
    expect(host.json().errorMsg).toContain("Host 'evil:80' is not allowed for /mcp; accepted: gw:8080");
    expect(served.servers).toBe(0);
    expect((await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, host: 'gw:8080' }, payload: LIST })).statusCode).toBe(200);
  });

  it('GW-78 an admission refusal answers with its status before the body; a 401 asks for a bearer token', async () => {
    const { app, served } = await door({ admit: async () => new GatewayError('UNAUTHORIZED', 'no credentials') });
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: LIST });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toMatchObject({ errorMsg: expect.stringContaining('no credentials'), hint: expect.any(String) });
    expect(served.servers).toBe(0);
  });

  it('GW-32 GET and DELETE answer 405 with Allow: POST', async () => {
    const { app } = await door();
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/mcp' });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST.' }, id: null });
    }
  });

  it('a body the door cannot take is a JSON-RPC error: too large 413, not JSON 400, another type 415', async () => {
    const { app, served } = await door();
    const large = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: `{"pad":"${'x'.repeat(MCP_BODY_LIMIT)}"}` });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining(String(MCP_BODY_LIMIT)) }, id: null });
    const bad = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: '{bad' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: -32700 } });
    expect(served.servers).toBe(0);
    // Another media type reaches the transport, which refuses it the same way.
    const text = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'content-type': 'text/plain' }, payload: 'hello' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('a request the fast path answers is answered once, without an SDK server; one it leaves goes to the SDK', async () => {
    let fast = 0;
    const { app, served } = await door({
      async fastPath(request, reply) {
        if ((request.body as { method?: string }).method !== 'tools/call') return false;
        fast++;
        void reply.code(200).header('content-type', 'application/json').send('{"fast":true}');
        return true;
      },
    });
    const call = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x' } }) });
    expect(call.body).toBe('{"fast":true}');
    expect({ fast, servers: served.servers }).toEqual({ fast: 1, servers: 0 });
    const list = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: LIST });
    expect(list.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    expect({ fast, servers: served.servers }).toEqual({ fast: 1, servers: 1 });
  });
});
