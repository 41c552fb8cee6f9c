/**
 * OAuth 2.1 for remote MCP clients on the cloud's /mcp, with a real
 * authorization server (oidc-provider, test/fixtures/oidc-issuer.ts) and the
 * MCP SDK's own client OAuth provider; and one agent across plants: the
 * gateways a token sees come from its claims through cloud.mcpAuth.gateways.
 */
import { createPublicKey, createSecretKey, type JsonWebKey } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT } from 'jose';
import { textLiteral } from '../../core/cloud-wire/protocol.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { parseConfig } from '../../core/roles/index.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { freePort } from '../fixtures/free-port.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { MemoryOAuthClient } from '../fixtures/oauth-client.js';
import { signIn, startTestIssuer, type TestIssuer } from '../fixtures/oidc-issuer.js';

async function callText(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const result = await client.callTool({ name, arguments: args });
  return { text: (result.content as { text: string }[]).map((c) => c.text).join(''), isError: result.isError === true };
}

describe('OAuth 2.1 on the cloud\'s /mcp, and one agent across plants', { timeout: 60_000 }, () => {
  let issuer: TestIssuer;
  let cloud: CloudRole;
  let url: string;
  let resource: string;
  let plantA: TestGateway;
  const tokens: Record<string, string> = {};
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    issuer = await startTestIssuer({
      accounts: [
        { id: 'bo', claims: { plants: ['north'] } },
        { id: 'ana', claims: { plants: ['north', 'south'] } },
      ],
      resources: [{ url: resource, scopes: ['fleet:read'] }],
    });
    const mcpAuth = { issuer: issuer.issuer, resource, gatewaysClaim: 'plants', gateways: { north: ['plant-a'], south: ['plant-b', 'plant-c'], everything: ['*'] } };
    cloud = await startTestCloud({ config: parseConfig({ dataDir: mkdtempSync(join(tmpdir(), 'cloud-oauth-')), cloud: { mcpAuth } }, 'cloud.json'), env: {}, embeddedBroker: { host: '127.0.0.1', port: 0 }, callDeadlineMs: 3000 });
    url = await cloud.listen('127.0.0.1', port);
    for (const name of ['plant-a', 'plant-b', 'plant-c']) tokens[name] = (await cloud.tokens.create(name)).token;
    plantA = await startTestGateway({ gateway: { name: 'plant-a', alias: 'North plant' }, machines: [simMachine('A1'), simMachine('A2')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: tokens['plant-a'] } });
    const b = await lightLink(cloud.brokerUrl as string, tokens['plant-b'] as string, textLiteral(JSON.stringify({ count: 1, machines: [{ machineID: 'B1', name: 'Lathe B1' }] })));
    closers.push(() => b.endAsync());
    await untilOnline(cloud, tokens['plant-a'] as string);
    await untilOnline(cloud, tokens['plant-b'] as string);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await plantA?.stop();
    await cloud?.stop();
    await issuer?.close();
  });

  const mint = (claims: Record<string, unknown>, o?: Parameters<TestIssuer['mint']>[1]) => issuer.mint({ sub: 'ana', aud: resource, scope: 'fleet:read', plants: ['north', 'south'], ...claims }, o);
  const session = async (token: string): Promise<McpSession> => {
    const s = await connectMcp(url, token);
    closers.push(() => s.close());
    return s;
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });

  it('serves its Protected Resource Metadata (RFC 9728) at the well-known path and under /mcp: the resource, the issuer, fleet:read', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.json()).toMatchObject({ resource, authorization_servers: [issuer.issuer], scopes_supported: ['fleet:read'], bearer_methods_supported: ['header'] });
    }
  });

  it('a request without a credential gets 401 with WWW-Authenticate naming the resource metadata and the scope', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="http://127.0.0.1:${new URL(url).port}/.well-known/oauth-protected-resource/mcp", scope="fleet:read"`);
  });

  it("the SDK's client OAuth provider connects: discovery from the 401, registration, authorization code with PKCE through the provider, the token, tools/list and a call", async () => {
    const oauth = new MemoryOAuthClient();
    const first = new Client({ name: 'plant-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), { authProvider: oauth });
    await expect(first.connect(transport)).rejects.toThrow(/Unauthorized/);
    expect(oauth.authorizationUrl?.origin).toBe(issuer.issuer);
    expect(oauth.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(oauth.authorizationUrl?.searchParams.get('resource')).toBe(resource);
    const { redirect } = await signIn(oauth.authorizationUrl as URL, 'bo');
    await transport.finishAuth(redirect.searchParams.get('code') as string);
    expect(issuer.serverErrors).toEqual([]);
    const client = new Client({ name: 'plant-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { authProvider: oauth }));
    closers.push(() => client.close());
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('list_gateways');
    const fleet = tools.find((t) => t.name === 'get_fleet_status');
    expect(fleet?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect((fleet?.inputSchema.properties as Record<string, { enum?: string[] }>).gateway?.enum).toEqual(['plant-a']);
    // bo sees plant-a only: a tool call needs no gateway argument and runs there.
    const machines = await callText(client, 'list_machines');
    expect(machines.isError).toBe(false);
    expect((JSON.parse(machines.text) as { machines: { machineID: string }[] }).machines.map((m) => m.machineID)).toEqual(['A1', 'A2']);
  });

  it('with several gateways: get_fleet_status and list_machines ask every visible gateway at once, an unreachable one reported in gateways[], not a failure; list_gateways gives each name, alias, online and machine count', async () => {
    const s = await session(await mint({}));
    const fleet = await s.call('get_fleet_status');
    expect(fleet.isError).toBe(false);
    const merged = fleet.json() as { gateways: { name: string; ok: boolean; error?: string }[]; byGateway: Record<string, { machines?: unknown[] }> };
    expect(merged.gateways.map((g) => [g.name, g.ok])).toEqual([['plant-a', true], ['plant-b', true], ['plant-c', false]]);
    expect(merged.gateways[2]?.error).toMatch(/offline/);
    expect(Object.keys(merged.byGateway)).toEqual(['plant-a', 'plant-b']);
    const machines = (await s.call('list_machines')).json() as { count: number; machines: { gateway: string; machineID: string }[] };
    expect(machines.machines.map((m) => `${m.gateway}/${m.machineID}`)).toEqual(['plant-a/A1', 'plant-a/A2', 'plant-b/B1']);
    expect(machines.count).toBe(3);
    const listed = (await s.call('list_gateways')).json() as { gateways: { name: string; alias: string | null; online: boolean; machineCount: number | null }[] };
    // plant-b's stand-in answers every call with its machine list: no gateway section, so no alias.
    expect(listed.gateways).toEqual([
      { name: 'plant-a', alias: 'North plant', online: true, machineCount: 2 },
      { name: 'plant-b', alias: null, online: true, machineCount: 1 },
      { name: 'plant-c', alias: null, online: false, machineCount: null },
    ]);
  });

  it('a tool other than the fleet tools needs the gateway argument when several are visible; a gateway not visible is refused naming the ones it may use', async () => {
    const s = await session(await mint({}));
    const without = await s.call('get_machine_status', { machineID: 'A1' });
    expect(without.isError).toBe(true);
    expect(without.text).toContain('accepted: plant-a, plant-b, plant-c');
    const other = await s.call('list_machines', { gateway: 'plant-z' });
    expect(other.isError).toBe(true);
    expect(other.text).toBe("Unknown gateway 'plant-z'; accepted: plant-a, plant-b, plant-c");
    const named = await s.call('list_machines', { gateway: 'plant-a' });
    expect((named.json() as { count: number }).count).toBe(2);
    // A token mapped to one gateway does not see another's.
    const bo = await session(await mint({ sub: 'bo', plants: ['north'] }));
    expect((await bo.call('list_machines', { gateway: 'plant-b' })).text).toBe("Unknown gateway 'plant-b'; accepted: plant-a");
    const nobody = await session(await mint({ sub: 'cy', plants: ['elsewhere'] }));
    expect((await nobody.call('list_machines')).text).toMatch(/^list_machines needs the gateway argument: this identity sees no gateway; accepted: none/);
  });

  it('refuses bad tokens with 401 invalid_token, quoting nothing of the token: alg none, HS256 signed with the public key, another audience, expired, another issuer, a kid not in the JWKS, oversized; no fleet:read scope is 403', async () => {
    const header = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const payload = header({ sub: 'ana', aud: resource, iss: issuer.issuer, scope: 'fleet:read', exp: Math.floor(Date.now() / 1000) + 600 });
    const publicPem = createPublicKey({ key: issuer.key.publicJwk as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hs256 = await new SignJWT({ sub: 'ana', scope: 'fleet:read' }).setProtectedHeader({ alg: 'HS256', kid: issuer.key.kid }).setIssuer(issuer.issuer).setAudience(resource).setExpirationTime('10m').sign(createSecretKey(Buffer.from(publicPem)));
    const cases: [string, string][] = [
      ['alg none', `${header({ alg: 'none', typ: 'JWT' })}.${payload}.`],
      ['HS256 with the public key', hs256],
      ['another audience', await mint({ aud: 'http://127.0.0.1:9/other' })],
      ['expired', await mint({}, { issuedAtSec: Math.floor(Date.now() / 1000) - 7200, expiresInSec: 600 })],
      ['another issuer', await mint({ iss: 'http://127.0.0.1:9/issuer' })],
      ['a kid not in the JWKS', await mint({}, { kid: 'k-unknown' })],
      ['oversized', await mint({ padding: 'x'.repeat(20_000) })],
    ];
    for (const [why, token] of cases) {
      const res = await post({ authorization: `Bearer ${token}` });
      // Node itself refuses a header block over 16 KiB (431) before the token's own bound is reached.
      if (why === 'oversized' && res.status === 431) continue;
      expect(res.status, why).toBe(401);
      expect(res.headers.get('www-authenticate'), why).toMatch(/^Bearer resource_metadata="[^"]+", scope="fleet:read", error="invalid_token", error_description="[^"]+"$/);
      const body = await res.text();
      expect(body.includes(token.slice(-16)), why).toBe(false);
    }
    const noScope = await post({ authorization: `Bearer ${await mint({ scope: 'openid' })}` });
    expect(noScope.status).toBe(403);
    expect(noScope.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it('GW-85 the static accessToken header keeps working beside OAuth: it selects its gateway as before', async () => {
    const s = await connectMcp(url, undefined, { accesstoken: tokens['plant-a'] as string });
    closers.push(() => s.close());
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain('list_gateways');
    expect((await s.call('list_machines')).json()).toMatchObject({ count: 2 });
  });
});
