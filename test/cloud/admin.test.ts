/**
 * The cloud's admin HTTP interface for gateway tokens (admin key, create
 * shown once, list without secrets, rotate, revoke, bounded bad input), the
 * disconnection of a revoked gateway from the embedded broker (at once
 * through the interface, at the next sweep when the CLI revoked it), and a
 * gateway's cloud link set through its own API without a restart.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudRole } from '../../core/roles/cloud/role.js';
import { UNAUTHORIZED_TEXT } from '../../plugins/cloud-mcp/index.js';
import { CLOUD_LINK_FILE } from '../../plugins/cloud-link/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { startTestCloud } from '../fixtures/cloud.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The secret part of cgw_<id>_<secret> (the secret may itself hold '_'). */
const secretOf = (token: string) => token.split('_').slice(2).join('_');

describe('cloud admin interface and revocation', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let url: string;
  let adminKey: string;
  const gateways: TestGateway[] = [];
  const sessions: McpSession[] = [];

  const admin = async (method: 'GET' | 'POST', path: string, body?: unknown, key: string | null = adminKey, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
  };
  const until = async (what: string, check: () => boolean, ms = 10_000) => {
    for (const end = Date.now() + ms; !check(); ) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };
  const gatewayWith = async (token: string, extra: Record<string, unknown> = {}) => {
    const gw = await startTestGateway({ machines: [simMachine('M1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token, ...extra } });
    gateways.push(gw);
    return gw;
  };

  beforeAll(async () => {
    cloud = await startTestCloud({ revocationSweepMs: 200 });
    url = await cloud.listen('127.0.0.1', 0);
    adminKey = (await cloud.adminKeys.create('ops')).token;
  });
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    await cloud?.stop();
  });

  it('GW-85 the admin interface needs an admin key; a gateway token made there is shown once and never listed', async () => {
    expect((await admin('GET', '/admin/gateway-tokens', undefined, null)).status).toBe(401);
    expect((await admin('GET', '/admin/gateway-tokens', undefined, 'cadm_000000000000_' + 'x'.repeat(43))).status).toBe(401);
    // A gateway token is not an admin key.
    const gatewayToken = (await cloud.tokens.create('not-an-admin')).token;
    expect((await admin('GET', '/admin/gateway-tokens', undefined, gatewayToken)).status).toBe(401);

    const made = await admin('POST', '/admin/gateway-tokens', { name: 'plant-x' });
    expect(made.status).toBe(201);
    const token = made.json.token as string;
    expect(token).toMatch(/^cgw_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(made.json.record).toMatchObject({ name: 'plant-x', valid: true });
    expect(await cloud.tokens.verify(token)).toBe(token.split('_')[1]);
    const listed = await admin('GET', '/admin/gateway-tokens');
    expect(listed.status).toBe(200);
    expect((listed.json.tokens as { id: string }[]).map((t) => t.id)).toContain(token.split('_')[1]);
    expect(listed.text).not.toContain(secretOf(token));
  });

  it('GW-85 a bad admin request is a 4xx that names the field; a browser origin is refused', async () => {
    const noName = await admin('POST', '/admin/gateway-tokens', {});
    expect(noName.status).toBe(400);
    expect(noName.json.message).toMatch(/^name:/);
    const extra = await admin('POST', '/admin/gateway-tokens', { name: 'a', secret: 'x' });
    expect(extra.json.message).toMatch(/unknown field 'secret'; accepted: name/);
    expect((await admin('POST', '/admin/gateway-tokens', { name: 'x'.repeat(129) })).status).toBe(400);
    expect((await admin('POST', '/admin/gateway-tokens', { name: 'a\u0000b' })).status).toBe(400);
    expect((await admin('POST', '/admin/gateway-tokens', '{"name":')).status).toBe(400);
    expect((await admin('POST', '/admin/gateway-tokens', JSON.stringify({ name: 'x'.repeat(20_000) }))).status).toBe(413);
    const badId = await admin('POST', `/admin/gateway-tokens/${'é'.repeat(3)}/revoke`);
    expect(badId.status).toBe(400);
    expect(badId.json.message).toMatch(/^id: a token id/);
    expect((await admin('POST', '/admin/gateway-tokens/abcdef012345/rotate')).status).toBe(404);
    expect((await admin('GET', '/admin/gateway-tokens', undefined, adminKey, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('GW-86 a token revoked through the admin interface disconnects its gateway at once; its calls are Unauthorized', async () => {
    const made = await admin('POST', '/admin/gateway-tokens', { name: 'plant-r' });
    const token = made.json.token as string;
    const id = token.split('_')[1] as string;
    await gatewayWith(token);
    await until('plant-r online', () => cloud.relay.isOnline(id));
    const s = await connectMcp(`${url}/mcp`, undefined, { accesstoken: token });
    sessions.push(s);
    expect((await s.call('list_machines')).json()).toMatchObject({ count: 1 });

    expect((await admin('POST', `/admin/gateway-tokens/${id}/revoke`)).json).toEqual({ revoked: id });
    await until('the gateway to be disconnected', () => !cloud.relay.isOnline(id), 2000);
    expect((await s.call('list_machines')).text).toBe(UNAUTHORIZED_TEXT);
    // Its reconnections are refused: it stays offline.
    await sleep(2500);
    expect(cloud.relay.isOnline(id)).toBe(false);
    expect(cloud.broker?.connectedUsers()).not.toContain(id);
  });

  it('GW-85 a rotated token: the old gateway connection ends, a gateway with the new token is served', async () => {
    const first = (await admin('POST', '/admin/gateway-tokens', { name: 'plant-t' })).json.token as string;
    const oldId = first.split('_')[1] as string;
    await gatewayWith(first);
    await until('plant-t online', () => cloud.relay.isOnline(oldId));
    const rotated = await admin('POST', `/admin/gateway-tokens/${oldId}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.json.replaces).toBe(oldId);
    const next = rotated.json.token as string;
    await until('the old connection to end', () => !cloud.relay.isOnline(oldId), 2000);
    const nextId = next.split('_')[1] as string;
    const gw = await gatewayWith(next);
    await until('plant-t online with the new token', () => cloud.relay.isOnline(nextId));
    const s = await connectMcp(`${url}/mcp`, undefined, { accesstoken: next });
    sessions.push(s);
    expect((await s.call('list_machines')).json()).toMatchObject({ count: 1 });
    expect((await gw.request('GET', '/api/system/gateway-info')).body.data).toMatchObject({ cloud: { configured: true, connected: true, tokenId: nextId, source: 'config' } });
  });

  it('GW-86 a token revoked by the CLI (straight in the database) disconnects its gateway at the next sweep', async () => {
    const { token, record } = await cloud.tokens.create('plant-s');
    await gatewayWith(token);
    await until('plant-s online', () => cloud.relay.isOnline(record.id));
    await cloud.tokens.revoke(record.id);
    await until('the sweep to disconnect it', () => !cloud.relay.isOnline(record.id), 3000);
  });

  it('GW-14 a gateway\'s cloud link is set through its API without a restart, survives one, is shown without its token, and is removed', async () => {
    const { token, record } = await cloud.tokens.create('plant-api');
    const gw = await startTestGateway({ machines: [simMachine('P1'), simMachine('P2')] });
    gateways.push(gw);
    expect((await gw.request('GET', '/api/system/gateway-info')).body.data).toMatchObject({ cloud: { configured: false, connected: false } });

    // Bad inputs name the field.
    const badToken = await gw.request('POST', '/api/security/cloud-link/set', { brokerUrl: cloud.brokerUrl, accessToken: 'not-a-token' });
    expect(badToken.body).toMatchObject({ errorCode: expect.any(Number) });
    expect(badToken.body.errorCode).not.toBe(0);
    expect(badToken.body.errorMsg).toMatch(/accessToken: a gateway token of the cloud/);
    expect((await gw.request('POST', '/api/security/cloud-link/set', { accessToken: token })).body.errorMsg).toMatch(/brokerUrl is needed/);
    expect((await gw.request('POST', '/api/security/cloud-link/set', { brokerUrl: 'http://x' })).body.errorMsg).toMatch(/brokerUrl/);
    expect((await gw.request('POST', '/api/security/cloud-link/set', { brokerUrl: cloud.brokerUrl, accessToken: token, user: 'nobody' })).body.errorMsg).toMatch(/user: no user 'nobody'/);
    // Administrators only: a user with every other API cannot set it.
    await gw.request('POST', '/api/security/user/add', { username: 'operator', password: 'operator-password-1', authorizedApis: ['/api/config/machines'] });
    const login = await gw.request('POST', '/api/auth/login', { username: 'operator', password: 'operator-password-1' }, { token: null });
    const refused = await gw.request('POST', '/api/security/cloud-link/set', { brokerUrl: cloud.brokerUrl, accessToken: token }, { token: (login.body.data as { token: string }).token });
    expect(refused.body.errorCode).not.toBe(0);
    expect(cloud.relay.isOnline(record.id)).toBe(false);

    const set = await gw.request('POST', '/api/security/cloud-link/set', { brokerUrl: cloud.brokerUrl, accessToken: token });
    expect(set.body.errorCode).toBe(0);
    expect(set.raw).not.toContain(secretOf(token));
    await until('the gateway online', () => cloud.relay.isOnline(record.id));
    const s = await connectMcp(`${url}/mcp`, undefined, { accesstoken: token });
    sessions.push(s);
    expect((await s.call('list_machines')).json()).toMatchObject({ count: 2 });
    const info = await gw.request('GET', '/api/system/gateway-info');
    expect(info.body.data).toMatchObject({ cloud: { configured: true, source: 'api', connected: true, tokenId: record.id, user: 'admin', brokerUrl: cloud.brokerUrl, callsAnswered: 1 } });
    expect(info.raw).not.toContain(secretOf(token));
    // Neither does the MCP tool show it.
    const own = await connectMcp(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }), gw.adminToken);
    sessions.push(own);
    expect((await own.call('get_system_info')).text).not.toContain(secretOf(token));
    const file = join(gw.dataDir, CLOUD_LINK_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // Restarted on the same data directory, it dials out again from what was stored.
    await gw.stop();
    await until('the stop to be seen', () => !cloud.relay.isOnline(record.id));
    const again = await startTestGateway({ machines: [simMachine('P1'), simMachine('P2')] }, gw.dataDir);
    gateways.push(again);
    await until('the gateway online after its restart', () => cloud.relay.isOnline(record.id));

    const removed = await again.request('POST', '/api/security/cloud-link/remove', {});
    expect(removed.body.data).toMatchObject({ configured: false, connected: false });
    await until('the gateway offline', () => !cloud.relay.isOnline(record.id));
    expect((await s.call('list_machines')).text).toMatch(/GATEWAY_SERVICE_UNAVAILABLE\(20001\)/);
  });
});
