/**
 * Every role limits its requests by default (core/http/rate-limit.ts, each
 * role's `rateLimits` config field): the gateway's /api and /mcp, the
 * program service's /api/v1 and the cloud's /mcp and /admin, each refusing
 * in its own error format with Retry-After; a console polling a dozen
 * endpoints every second stays under the limits; each role's section turns
 * them off or changes a figure, and a wrong figure is named by its path.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS, rateLimitSettingsSchema } from '../../core/http/rate-limit.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';
import { parseConfig } from '../../core/roles/index.js';
import { programsSettings } from '../../core/roles/programs/config.js';
import { cloudRoleSettings } from '../../core/roles/cloud/config.js';
import { gatewaySettings } from '../../core/roles/gateway/config.js';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { startTestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, TEST_PASSWORD_COST } from '../fixtures/programs.js';

const toStop: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (toStop.length) await (toStop.pop() as () => Promise<unknown>)();
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const mcpCall = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Posts a body of `size` bytes on a connection of its own, as a slow client
 * on a loaded link does: a first MiB, a pause in which the server answers,
 * the rest, and only then reads. What it reads: the status line's code (or
 * `none`), the socket's error code, and whether the connection was still
 * open afterwards.
 */
async function postSlowly(url: string, path: string, size: number): Promise<{ status: string; error: string | undefined }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise((r) => socket.once('connect', r));
  socket.pause();
  let received = '';
  let error: string | undefined;
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`);
  const mib = Buffer.alloc(1024 * 1024, 0x20);
  socket.write(mib);
  await sleep(300);
  for (let sent = mib.length; sent < size; sent += mib.length) socket.write(mib.subarray(0, Math.min(mib.length, size - sent)));
  await sleep(300);
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.resume();
  await sleep(300);
  socket.destroy();
  return { status: /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 'none', error };
}

describe('a refused client with a body on its way', () => {
  it('a client over its limit that sends a 4 MiB body (within the route\'s limit) reads the 429, not a reset; a body over the route\'s limit is still cut off', async () => {
    const limits = rateLimitSettingsSchema.parse({ families: { uploads: { perAddress: 1, perPrincipal: 1 } } });
    const svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, rateLimits: limits });
    toStop.push(() => svc.stop());
    const upload = '/api/v1/programs/prg_0123456789abcdef/versions';
    // The first upload of the window is counted and refused as anonymous (401); the next ones are over the limit.
    expect((await postSlowly(svc.url, upload, 4 * 1024 * 1024)).status).toBe('401');
    for (let i = 0; i < 3; i++) expect(await postSlowly(svc.url, upload, 4 * 1024 * 1024)).toEqual({ status: '429', error: undefined });
    // More than the upload route reads at all: the server stops reading and closes, as it would for a 413.
    expect((await postSlowly(svc.url, upload, 16 * 1024 * 1024)).status).not.toBe('429');
  }, 60_000);
});

describe('rate limits in every role', () => {
  it('each role\'s config section has the limits on by default, with the documented figures', () => {
    const config = parseConfig({});
    expect(gatewaySettings(config).listener.rateLimits).toEqual(DEFAULT_RATE_LIMITS);
    expect(programsSettings(config).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
    expect(cloudRoleSettings(parseConfig({ cloud: {} })).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
    expect(DEFAULT_RATE_LIMITS.enabled).toBe(true);
    // No family lets one client send more than 3,000 requests a minute.
    expect(DEFAULT_RATE_LIMITS.windowSeconds).toBe(60);
    for (const { perPrincipal, perAddress } of Object.values(DEFAULT_RATE_LIMITS.families)) expect(Math.max(perPrincipal, perAddress)).toBeLessThanOrEqual(3000);
  });

  it('a figure is set in the role\'s section (the others keep their defaults) and a wrong one is named by its path', () => {
    const config = parseConfig({ programs: { rateLimits: { families: { reads: { perAddress: 6000 } } } } });
    expect(programsSettings(config).rateLimits.families.reads).toEqual({ perPrincipal: 3000, perAddress: 6000 });
    expect(programsSettings(config).rateLimits.families.writes).toEqual(DEFAULT_RATE_LIMITS.families.writes);
    expect(() => parseConfig({ communication: { rateLimits: { families: { login: { perAddress: 0 } } } } })).toThrow(/communication\.rateLimits\.families\.login\.perAddress/);
    expect(() => parseConfig({ cloud: { rateLimits: { families: { everything: {} } } } })).toThrow(/cloud\.rateLimits\.families/);
  });

  it('gateway: more than 30 logins a minute from one address are refused 429 with Retry-After in the errorCode format', async () => {
    const gw = await startTestGateway({ communication: { rateLimits: {} } });
    toStop.push(() => gw.stop());
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await gw.gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: {}, remoteAddress: '10.1.0.1' })).statusCode);
    // The fixture's own login came from 127.0.0.1, which counts apart.
    expect(statuses.slice(0, 30).every((s) => s !== 429)).toBe(true);
    expect(statuses[30]).toBe(429);
    const refused = await gw.gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: {}, remoteAddress: '10.1.0.1' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json()).toMatchObject({ errorCode: 8, errorMsg: expect.stringContaining('more than 30 login requests in 60 s from this source address') });
    expect((await gw.gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: {}, remoteAddress: '10.1.0.2' })).statusCode).not.toBe(429);
  });

  it('gateway: over the MCP calls\' limit /mcp answers 429 as JSON-RPC with Retry-After', async () => {
    const gw = await startTestGateway({ communication: { rateLimits: { families: { mcp: { perPrincipal: 3, perAddress: 100 } } } } });
    toStop.push(() => gw.stop());
    const call = () => gw.gateway.http.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload: mcpCall });
    for (let i = 0; i < 3; i++) expect((await call()).statusCode).toBe(200);
    const refused = await call();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/^Too many requests: more than 3 mcp requests in 60 s from this caller; retry after \d+ s$/) }, id: null });
  });

  it('gateway: a console polling twelve endpoints every second for a minute (720 reads) is not limited by the defaults', async () => {
    const gw = await startTestGateway({ communication: { rateLimits: {} } });
    toStop.push(() => gw.stop());
    const paths = ['/api/machine/list', '/api/machine/status', '/api/health', '/api/group/list'];
    const statuses = new Set<number>();
    for (let second = 0; second < 60; second++) {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => gw.request('GET', paths[i % paths.length] as string)));
      for (const a of answers) statuses.add(a.status);
    }
    expect(statuses.has(429)).toBe(false);
  });

  it('program service: over a limit the 429 problem too-many-requests with Retry-After; turned off in programs.rateLimits, nothing is refused', async () => {
    const plugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p));
    const svc = await startTestProgramService({ plugins, rateLimits: DEFAULT_RATE_LIMITS });
    toStop.push(() => svc.stop());
    const login = () => svc.request('POST', '/api/v1/auth/login', { body: {}, unchecked: true });
    for (let i = 0; i < 30; i++) expect((await login()).status).not.toBe(429);
    const refused = await login();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: 'https://cnc-gateway.dev/problems/too-many-requests', status: 429, detail: expect.stringContaining('more than 30 login requests') });

    const off = await startTestProgramService({ plugins, rateLimits: programsSettings(parseConfig({ programs: { rateLimits: { enabled: false } } })).rateLimits });
    toStop.push(() => off.stop());
    for (let i = 0; i < 40; i++) expect((await off.request('POST', '/api/v1/auth/login', { body: {}, unchecked: true })).status).not.toBe(429);
  });

  it('cloud: /admin over its limit per key is 429 in the errorCode format; /mcp over its limit is 429 as JSON-RPC', async () => {
    const cloud = await startTestCloud({ rateLimits: { ...DEFAULT_RATE_LIMITS, families: { ...DEFAULT_RATE_LIMITS.families, mcp: { perPrincipal: 5, perAddress: 1200 } } } });
    toStop.push(() => cloud.stop());
    const { http } = cloud.context;
    const adminKey = (await cloud.adminKeys.create('ops')).token;
    const admin = () => http.inject({ method: 'GET', url: '/admin/gateway-tokens', headers: { authorization: `Bearer ${adminKey}` } });
    for (let i = 0; i < DEFAULT_RATE_LIMITS.families.admin.perPrincipal; i++) expect((await admin()).statusCode).toBe(200);
    const refusedAdmin = await admin();
    expect(refusedAdmin.statusCode).toBe(429);
    expect(refusedAdmin.headers['retry-after']).toMatch(/^\d+$/);
    expect(refusedAdmin.json()).toMatchObject({ errorCode: 8, errorMsg: expect.stringContaining('more than 120 admin requests in 60 s from this caller') });

    const mcp = () => http.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, accesstoken: 'cgw_nope_nope' }, payload: mcpCall });
    for (let i = 0; i < 5; i++) expect((await mcp()).statusCode).not.toBe(429);
    const refusedMcp = await mcp();
    expect(refusedMcp.statusCode).toBe(429);
    expect(refusedMcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });
});
