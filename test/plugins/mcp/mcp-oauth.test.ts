/**
 * OAuth 2.1 for remote MCP clients on the gateway's own /mcp (`mcp.mcpAuth`),
 * with a real authorization server (oidc-provider, test/fixtures/oidc-issuer.ts)
 * and the MCP SDK's own client OAuth provider: a token's machine groups come
 * from its claims through `mcp.mcpAuth.groups`, and every answer is narrowed
 * to their machines; the gateway's JWTs and secret keys keep working beside it.
 */
import { createPublicKey, createSecretKey, type JsonWebKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT } from 'jose';
import { ConfigError } from '../../../core/config/config.js';
import { parseConfig } from '../../../core/roles/index.js';
import { freePort } from '../../fixtures/free-port.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';
import { MemoryOAuthClient } from '../../fixtures/oauth-client.js';
import { signIn, startTestIssuer, type TestIssuer } from '../../fixtures/oidc-issuer.js';

type Fleet = { summary: { total: number }; machines: { machineID: string }[] };

describe("OAuth 2.1 on the gateway's /mcp", { timeout: 60_000 }, () => {
  let issuer: TestIssuer;
  let gw: TestGateway;
  let base: string;
  let audience: string;
  const sessions: McpSession[] = [];

  beforeAll(async () => {
    const port = await freePort();
    audience = `http://127.0.0.1:${port}/mcp`;
    issuer = await startTestIssuer({
      accounts: [{ id: 'bo', groups: ['cell-a-readers'] }],
      resources: [{ url: audience, scopes: ['fleet:read'] }],
    });
    gw = await startTestGateway({
      machines: [simMachine('A1'), simMachine('A2'), simMachine('B1')],
      groups: [
        { groupID: 'cellA', name: 'Cell A', machineIDs: ['A1', 'A2'] },
        { groupID: 'cellB', name: 'Cell B', machineIDs: ['B1'] },
      ],
      mcp: { mcpAuth: { issuer: issuer.issuer, audience, groups: { 'cell-a-readers': ['cellA'], 'plant-admins': '*' } } },
    });
    base = await gw.gateway.listen({ host: '127.0.0.1', port });
  }, 60_000);
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    await gw?.stop();
    await issuer?.close();
  });

  const mint = (claims: Record<string, unknown>, o?: Parameters<TestIssuer['mint']>[1]) => issuer.mint({ sub: 'bo', aud: audience, scope: 'fleet:read', groups: ['cell-a-readers'], ...claims }, o);
  const session = async (token: string): Promise<McpSession> => {
    const s = await connectMcp(base, token);
    sessions.push(s);
    return s;
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  const machineIDs = (json: Record<string, unknown>) => (json.machines as { machineID: string }[]).map((m) => m.machineID);

  it('serves its Protected Resource Metadata (RFC 9728) at the well-known path and under /mcp: the audience, the issuer, fleet:read', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.json()).toMatchObject({ resource: audience, authorization_servers: [issuer.issuer], scopes_supported: ['fleet:read'], bearer_methods_supported: ['header'] });
    }
  });

  it('GW-78 GW-97 a request without a credential gets 401 with WWW-Authenticate naming the resource metadata and the scope', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="fleet:read"`);
    expect(await res.json()).toMatchObject({ errorCode: 3 });
  });

  it("the SDK's client OAuth provider connects: discovery from the 401, registration, authorization code with PKCE through the provider, the token, tools/list and a call narrowed to the token's group", async () => {
    const oauth = new MemoryOAuthClient();
    const first = new Client({ name: 'plant-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { authProvider: oauth });
    await expect(first.connect(transport)).rejects.toThrow(/Unauthorized/);
    expect(oauth.authorizationUrl?.origin).toBe(issuer.issuer);
    expect(oauth.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(oauth.authorizationUrl?.searchParams.get('resource')).toBe(audience);
    const { redirect } = await signIn(oauth.authorizationUrl as URL, 'bo');
    await transport.finishAuth(redirect.searchParams.get('code') as string);
    expect(issuer.serverErrors).toEqual([]);
    const client = new Client({ name: 'plant-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { authProvider: oauth }));
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(13);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true && t.annotations.destructiveHint === false)).toBe(true);
      const result = await client.callTool({ name: 'list_machines', arguments: {} });
      expect(result.isError).not.toBe(true);
      expect(machineIDs(JSON.parse((result.content as { text: string }[])[0]?.text ?? '{}') as Record<string, unknown>)).toEqual(['A1', 'A2']);
    } finally {
      await client.close();
    }
  });

  it("a token whose groups claim maps to one group sees only that group's machines: list_machines, get_fleet_status, list_groups; another group's machine is unknown (GW-94)", async () => {
    const s = await session(await mint({}));
    expect(machineIDs((await s.call('list_machines')).json())).toEqual(['A1', 'A2']);
    const fleet = (await s.call('get_fleet_status')).json() as Fleet;
    expect(fleet.machines.map((m) => m.machineID)).toEqual(['A1', 'A2']);
    expect(fleet.summary.total).toBe(2);
    expect(((await s.call('list_groups')).json().groups as { groupID: string }[]).map((g) => g.groupID)).toEqual(['cellA']);
    const other = await s.call('get_machine', { machineID: 'B1' });
    expect(other.isError).toBe(true);
    expect(other.text).toMatch(/GENERAL_MACHINE_ID_NOT_EXISTED\(10003\).*list_machines/);
    expect((await s.call('read_machine', { machineID: 'B1' })).text).toMatch(/10003/);
    const otherGroup = await s.call('get_fleet_status', { groupID: 'cellB' });
    expect(otherGroup.isError).toBe(true);
    expect(otherGroup.text).toMatch(/GENERAL_GROUP_ID_NOT_EXISTED/);
    const own = await s.call('get_machine', { machineID: 'A1' });
    expect(own.isError).toBe(false);
  });

  it('GW-94 every tool refuses a machine or group outside the token\'s groups as unknown, and get_error_log shows the caller\'s own rows only', async () => {
    const s = await session(await mint({}));
    for (const [tool, args] of [
      ['read_task_data', { type: 'CNCStatus', machineID: 'B1' }],
      ['query_history', { type: 'CNCStatus', start: '-1h', machineID: 'B1' }],
      ['query_history', { type: 'CNCStatus', start: '-1h', machineID: 'B1', newestFirst: true }],
      ['analyze', { kind: 'oee', start: '-1h', machineID: 'B1' }],
      ['read_tool_life', { machineID: 'B1' }],
      ['list_programs', { machineID: 'B1' }],
    ] as const) {
      const r = await s.call(tool, args);
      expect(r.isError, tool).toBe(true);
      expect(r.text, tool).toMatch(/GENERAL_MACHINE_ID_NOT_EXISTED\(10003\)/);
    }
    for (const [tool, args] of [
      ['read_task_data', { type: 'GroupCount', groupID: 'cellB' }],
      ['query_history', { type: 'CNCStatus', start: '-1h', groupID: 'cellB' }],
    ] as const) {
      const r = await s.call(tool, args);
      expect(r.isError, tool).toBe(true);
      expect(r.text, tool).toMatch(/GENERAL_GROUP_ID_NOT_EXISTED/);
    }
    expect((await s.call('query_history', { type: 'CNCStatus', start: '-1h', machineID: 'A1' })).isError).toBe(false);
    // The administrator's failure is in the log; the token's caller does not see it, the administrator does.
    expect((await gw.request('GET', '/api/config/machine?machineID=B1-missing')).body.errorCode).toBe(10003);
    const rowsOf = async (x: McpSession) => ((await x.call('get_error_log')).json().data as { user: string | null }[]);
    expect((await rowsOf(s)).every((row) => row.user === 'oauth:bo')).toBe(true);
    const admin = await session(gw.adminToken);
    expect((await rowsOf(admin)).some((row) => row.user === 'admin')).toBe(true);
  });

  it('a claim value mapped to "*" sees every machine', async () => {
    const s = await session(await mint({ groups: ['plant-admins'] }));
    expect(machineIDs((await s.call('list_machines')).json())).toEqual(['A1', 'A2', 'B1']);
    expect(((await s.call('get_fleet_status')).json() as Fleet).summary.total).toBe(3);
  });

  it('a token none of whose claim values is mapped sees no machine: 403 naming the values it has and the setting to map them in', async () => {
    const res = await post({ authorization: `Bearer ${await mint({ groups: ['visitors'] })}` });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { errorCode: number; errorMsg: string };
    expect(body.errorCode).toBe(5);
    expect(body.errorMsg).toContain("'visitors'");
    expect(body.errorMsg).toContain('mcp.mcpAuth.groups');
  });

  it('GW-97 refuses bad tokens with 401 invalid_token, quoting nothing of the token: another audience, expired, alg none, HS256 signed with the public key, a kid not in the JWKS, another issuer; no fleet:read scope is 403', async () => {
    const segment = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const payload = segment({ sub: 'bo', aud: audience, iss: issuer.issuer, scope: 'fleet:read', groups: ['cell-a-readers'], exp: Math.floor(Date.now() / 1000) + 600 });
    const publicPem = createPublicKey({ key: issuer.key.publicJwk as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hs256 = await new SignJWT({ sub: 'bo', scope: 'fleet:read', groups: ['cell-a-readers'] })
      .setProtectedHeader({ alg: 'HS256', kid: issuer.key.kid })
      .setIssuer(issuer.issuer)
      .setAudience(audience)
      .setExpirationTime('10m')
      .sign(createSecretKey(Buffer.from(publicPem)));
    const cases: [string, string][] = [
      ['another audience', await mint({ aud: 'http://127.0.0.1:9/mcp' })],
      ['expired', await mint({}, { issuedAtSec: Math.floor(Date.now() / 1000) - 7200, expiresInSec: 600 })],
      ['alg none', `${segment({ alg: 'none', typ: 'JWT' })}.${payload}.`],
      ['HS256 with the public key', hs256],
      ['a kid not in the JWKS', await mint({}, { kid: 'k-unknown' })],
      ['another issuer', await mint({ iss: 'http://127.0.0.1:9/issuer' })],
    ];
    for (const [why, token] of cases) {
      const res = await post({ authorization: `Bearer ${token}` });
      expect(res.status, why).toBe(401);
      expect(res.headers.get('www-authenticate'), why).toMatch(/^Bearer resource_metadata="[^"]+", scope="fleet:read", error="invalid_token", error_description="[^"]+"$/);
      expect((await res.text()).includes(token.slice(-16)), why).toBe(false);
    }
    const noScope = await post({ authorization: `Bearer ${await mint({ scope: 'openid' })}` });
    expect(noScope.status).toBe(403);
    expect(noScope.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it("GW-72 GW-78 the gateway's secret keys and JWTs keep working beside OAuth, with every machine their user may see", async () => {
    await gw.request('POST', '/api/security/user/add', { username: 'agent', password: 'agent-password-1', authorizedApis: ['/api/config/machines'] });
    const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'agent' })).body.data as { key: string }).key;
    const byKey = await session(key);
    expect(machineIDs((await byKey.call('list_machines')).json())).toEqual(['A1', 'A2', 'B1']);
    const byJwt = await session(gw.adminToken);
    expect(((await byJwt.call('list_groups')).json().groups as unknown[]).length).toBe(2);
  });

  it('a mistake in mcp.mcpAuth is reported at start with its path and what is accepted', () => {
    const problems = (mcpAuth: Record<string, unknown>): string => {
      try {
        parseConfig({ mcp: { mcpAuth } }, 'gateway.json');
      } catch (err) {
        if (err instanceof ConfigError) return err.problems.join('\n');
        throw err;
      }
      throw new Error('expected a ConfigError');
    };
    expect(problems({ issuer: issuer.issuer, audience, groups: { 'cell-a-readers': 'all' } })).toMatch(/mcp\.mcpAuth\.groups\.cell-a-readers/);
    expect(problems({ issuer: 'not a url', audience })).toMatch(/mcp\.mcpAuth\.issuer/);
    expect(problems({ issuer: issuer.issuer })).toMatch(/mcp\.mcpAuth\.audience/);
    expect(problems({ issuer: issuer.issuer, audience, algorithms: ['HS256'] })).toMatch(/mcp\.mcpAuth\.algorithms\[0\].*RS256/);
    expect(problems({ issuer: issuer.issuer, audience, group: {} })).toMatch(/mcp\.mcpAuth.*group/);
  });
});

describe("the gateway's /mcp while the identity provider is down", { timeout: 60_000 }, () => {
  it("a provider's token answers 503 saying the provider cannot be reached; the gateway's own credentials still work", async () => {
    const issuer = await startTestIssuer({ accounts: [{ id: 'bo', groups: ['cell-a-readers'] }] });
    const audience = 'http://gateway-01.plant.test/mcp';
    const gw = await startTestGateway({
      machines: [simMachine('A1')],
      groups: [{ groupID: 'cellA', name: 'Cell A', machineIDs: ['A1'] }],
      mcp: { mcpAuth: { issuer: issuer.issuer, audience, groups: { 'cell-a-readers': ['cellA'] } } },
    });
    try {
      const base = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
      const token = await issuer.mint({ sub: 'bo', aud: audience, scope: 'fleet:read', groups: ['cell-a-readers'] });
      issuer.pause();
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
      expect(((await res.json()) as { errorMsg: string }).errorMsg).toMatch(/identity provider cannot be reached/);
      const local = await connectMcp(base, gw.adminToken);
      expect(((await local.call('list_machines')).json().machines as unknown[]).length).toBe(1);
      await local.close();
    } finally {
      issuer.resume();
      await gw.stop();
      await issuer.close();
    }
  });
});
