/**
 * A string that is not well-formed Unicode (a lone UTF-16 surrogate, JSON
 * `"\ud800"`) is refused where each surface parses its body, naming the
 * field: the gateway's /api (errorCode 2) and /mcp (JSON-RPC invalid params),
 * the program service's /api/v1 (a 400 problem), the cloud's /mcp. Query
 * strings and path parameters cannot carry one: their percent-decoding reads
 * UTF-8 and leaves the encoded surrogate `%ED%A0%80` undecoded (query) or
 * refuses the path. U+0000 (JSON `"\u0000"`, a query's `%00`) is refused
 * the same way, naming the field (test/plugins/programs-service/nul-text.test.ts
 * for the program service on both engines).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { MCP_PATH } from '../../plugins/mcp/index.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';

const LONE = 'x\ud800';
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json' };
const toolCall = (id: number | string, name: string, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('ill-formed strings are refused at the edge of every surface', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let cloud: CloudRole;
  let cloudUrl: string;
  const logged: { level: number; msg: string; err?: { stack?: string } }[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('M1')] });
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) });
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, logger });
    cloud = await startTestCloud();
    cloudUrl = `${await cloud.listen('127.0.0.1', 0)}/mcp`;
  });
  afterAll(async () => {
    await gw?.stop();
    await svc?.stop();
    await cloud?.stop();
  });

  it('the anonymous POST /api/v1/auth/login {"username":"x\\ud800"} is a 400 naming body.username, and nothing is logged as an error', async () => {
    const res = await svc.request('POST', '/api/v1/auth/login', { body: { username: LONE, password: 'whatever-password' } });
    expect(res.status).toBe(400);
    expect(res.body.type).toMatch(/invalid-request$/);
    expect(res.body.errors).toEqual([{ field: 'body.username', message: expect.stringContaining('not well-formed Unicode'), accepted: 'well-formed Unicode text' }]);
    expect(logged.filter((l) => l.level >= 50 || l.err?.stack !== undefined)).toEqual([]);
  });

  it('/api/v1: in a field name, and deep in a value, the field is named', async () => {
    const key = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: 'whatever-password', [`note${LONE}`]: 1 } });
    expect(key.status).toBe(400);
    expect(key.body.errors[0].field).toBe('body.notex\\ud800 (field name)');
    const deep = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: { list: ['ok', `a\udc00b`] } } });
    expect(deep.status).toBe(400);
    expect(deep.body.errors).toEqual([expect.objectContaining({ field: 'body.password.list[1]', message: expect.stringContaining('lone UTF-16 surrogate') })]);
  });

  it('/api (gateway): a value and a field name with a lone surrogate are errorCode 2 naming the field', async () => {
    const value = await gw.request('POST', '/api/config/group/add', { groupID: 'G9', name: `Hall ${LONE}`, machineIDs: ['M1'] });
    expect(value.status).toBe(400);
    expect(value.body.errorCode).toBe(2);
    expect(value.body.errorMsg).toContain('request body: name: not well-formed Unicode');
    const key = await gw.request('POST', '/api/config/group/add', { groupID: 'G9', name: 'Hall', machineIDs: ['M1'], [LONE]: true });
    expect(key.status).toBe(400);
    expect(key.body.errorMsg).toContain('request body: x\\ud800 (field name): not well-formed Unicode');
    expect((await gw.request('GET', '/api/config/groups')).body.data).toEqual([]);
  });

  it('/mcp (gateway): a JSON-RPC invalid-params error naming the argument, with the request id', async () => {
    const res = await gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload: toolCall(7, 'get_machine', { machineID: LONE }) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: expect.stringContaining('Invalid params: params.arguments.machineID: not well-formed Unicode') } });
    const method = await gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload: JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: `tools/${LONE}` }) });
    expect(method.statusCode).toBe(400);
    expect(method.json()).toMatchObject({ id: 'r1', error: { code: -32600, message: expect.stringContaining('Invalid Request: method:') } });
    const key = await gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload: toolCall(8, 'list_machines', { [LONE]: 'M1' }) });
    expect(key.statusCode).toBe(400);
    expect(key.json()).toMatchObject({ id: 8, error: { code: -32602, message: expect.stringContaining('params.arguments.x\\ud800 (field name): not well-formed Unicode') } });
  });

  it('/mcp (cloud): the same JSON-RPC error, before any gateway is asked', async () => {
    const res = await fetch(cloudUrl, { method: 'POST', headers: { ...MCP_HEADERS, accesstoken: 'cgw_nobody_x' }, body: toolCall('c1', 'get_machine', { machineID: LONE }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 'c1', error: { code: -32602, message: expect.stringContaining('Invalid params: params.arguments.machineID: not well-formed Unicode') } });
    const key = await fetch(cloudUrl, { method: 'POST', headers: MCP_HEADERS, body: toolCall(2, 'list_machines', { [LONE]: 'M1' }) });
    expect(key.status).toBe(400);
    expect(await key.json()).toMatchObject({ id: 2, error: { code: -32602, message: expect.stringContaining('params.arguments.x\\ud800 (field name)') } });
  });

  it('U+0000 is refused like a lone surrogate, naming the field: /api in a body and a query, /mcp of the gateway and of the cloud', async () => {
    const body = await gw.request('POST', '/api/config/group/add', { groupID: 'G9', name: 'Hall\u00003', machineIDs: ['M1'] });
    expect(body.status).toBe(400);
    expect(body.body.errorCode).toBe(2);
    expect(body.body.errorMsg).toContain('request body: name: holds U+0000 (NUL), which no text field takes; accepted: text without U+0000');
    const query = await gw.request('GET', '/api/config/machine?machineID=M1%00');
    expect(query.status).toBe(400);
    expect(query.body.errorMsg).toContain('machineID: holds U+0000 (NUL)');
    expect((await gw.request('GET', '/api/config/groups')).body.data).toEqual([]);
    const mcp = await gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload: toolCall(9, 'get_machine', { machineID: 'M1\u0000' }) });
    expect(mcp.statusCode).toBe(400);
    expect(mcp.json()).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: expect.stringContaining('Invalid params: params.arguments.machineID: holds U+0000 (NUL)') } });
    const cloudCall = await fetch(cloudUrl, { method: 'POST', headers: { ...MCP_HEADERS, accesstoken: 'cgw_nobody_x' }, body: toolCall('c9', 'get_machine', { machineID: '\u0000' }) });
    expect(cloudCall.status).toBe(400);
    expect(await cloudCall.json()).toMatchObject({ id: 'c9', error: { code: -32602, message: expect.stringContaining('params.arguments.machineID: holds U+0000 (NUL)') } });
  });

  it('query strings and path parameters: %ED%A0%80 (a surrogate in UTF-8 form) never decodes to one', async () => {
    // Gateway query: the value stays the undecoded text, a well-formed string judged like any other (not a machine ID).
    const query = await gw.request('GET', '/api/config/machine?machineID=%ED%A0%80');
    expect(query.status).toBe(400);
    expect(query.body.errorMsg).toMatch(/^Invalid parameter\. machineID: found "%ED%A0%80"/);
    // Program service: a path parameter that does not decode is refused as a bad path; a query value stays text.
    const path = await svc.request('GET', '/api/v1/admin/users/%ED%A0%80', { unchecked: true });
    expect(path.status).toBe(400);
    expect(path.body.errors).toEqual([expect.objectContaining({ field: 'path' })]);
  });
});
