/**
 * Several cloud instances on one PostgreSQL (CLOUD_DATABASE_URL), as
 * docs/cloud-relay.md ("Several cloud instances") sets them up:
 *
 * - two instances and one Mosquitto with the dynamic security plugin, three
 *   real gateways: tokens created, rotated and revoked through the admin
 *   interface of one instance, with no broker file edited; the other
 *   instance and the gateways follow (calls through the other instance's
 *   /mcp reach the gateways; a rotated token's old one and a revoked one are
 *   refused by both within 5 s, the revoked gateway removed from the broker
 *   and its retained presence cleared, so no consumer sees it online);
 * - two instances each with its embedded broker: a gateway on one is
 *   disconnected within 5 s when its token is revoked through the other.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC_PREFIX } from '../../core/cloud-wire/protocol.js';
import { MosquittoDynamicSecurity } from '../../core/mqtt/dynamic-security.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { brokerTakes as takes, tokenAdmin } from './cloud-admin.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const prefix = DEFAULT_TOPIC_PREFIX;
const ROOT = resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idOf = (token: string) => token.split('_')[1] as string;
/** Each instance has its own admin client and its own relay user (with use_username_as_clientid two sharing one would push each other off). */
const ADMIN_1 = { adminUsername: 'cloud-admin-1', adminPassword: 'cloud-admin-1-password' };
const ADMIN_2 = { username: 'cloud-admin-2', password: 'cloud-admin-2-password' };
const WATCHER = { username: 'presence-watcher', password: 'watcher-password' };
const UNKNOWN = 'Unauthorized: missing or unknown accessToken header.';

/** Polls `check` every 50 ms until it is true, failing after `ms`; answers how long it took. */
async function within(ms: number, what: string, check: () => Promise<boolean> | boolean): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** `npm run cloud-token` against the shared database. */
function cli(databaseUrl: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cloud-cli-'));
  const config = join(dir, 'cloud.json');
  writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data') }));
  return spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', ...args, '--config', config], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_DATA_DIR: '', CLOUD_DATABASE_URL: databaseUrl },
  });
}

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);
afterAll(() => postgres?.stop());

describe('two cloud instances on one PostgreSQL and one Mosquitto with dynamic security, three gateways', { timeout: 120_000 }, () => {
  let broker: MosquittoController;
  let one: CloudRole;
  let two: CloudRole;
  const urls: string[] = [];
  let adminKey: string;
  const gateways: TestGateway[] = [];
  const tokens: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  const session = async (instance: number, token: string): Promise<McpSession> => {
    const s = await connectMcp(urls[instance] as string, undefined, { accesstoken: token });
    closers.push(() => s.close());
    return s;
  };
  const admin = async (instance: number, path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }> => tokenAdmin(urls[instance] as string, adminKey, path, body);
  /** Whether the broker takes these credentials now: 'accepted', or its refusal. */
  const brokerTakes = (username: string, password: string): Promise<string> => takes(broker.url, username, password);
  /** The retained presence of a gateway a consumer subscribing now gets ('' when none). */
  const retainedPresence = async (tokenId: string): Promise<string> => {
    const c = await mqtt.connectAsync(broker.url, { ...WATCHER, protocolVersion: 5, reconnectPeriod: 0 });
    try {
      const got = new Promise<string>((resolve) => {
        c.on('message', (_topic, payload, packet) => {
          if (packet.retain) resolve(payload.toString('utf8'));
        });
        setTimeout(() => resolve(''), 500);
      });
      await c.subscribeAsync(`${prefix}/gateways/${tokenId}/presence`, { qos: 1 });
      return await got;
    } finally {
      await c.endAsync(true);
    }
  };

  beforeAll(async () => {
    const databaseUrl = await postgres.createDatabase();
    broker = await startMosquitto({ dynamicSecurity: ADMIN_1, listenerLines: ['use_username_as_clientid true'] });
    // The operator's one-time setup (docs/cloud-relay.md): the instances' relay users and their role, the second instance's admin client, a consumer of presence.
    const setup = await MosquittoDynamicSecurity.connect({ url: broker.url, username: ADMIN_1.adminUsername, password: ADMIN_1.adminPassword, topicPrefix: prefix });
    const acl = (rolename: string, acltype: string, topic: string) => ({ command: 'addRoleACL', rolename, acltype, topic, allow: true });
    const answers = await setup.send([
      { command: 'createRole', rolename: 'cncgw-cloud' },
      acl('cncgw-cloud', 'subscribePattern', `${prefix}/#`),
      acl('cncgw-cloud', 'publishClientReceive', `${prefix}/#`),
      acl('cncgw-cloud', 'publishClientSend', `${prefix}/gateways/+/requests`),
      acl('cncgw-cloud', 'publishClientSend', `${prefix}/gateways/+/presence`),
      { command: 'createClient', username: 'cloud-1', password: 'cloud-1-password', roles: [{ rolename: 'cncgw-cloud' }] },
      { command: 'createClient', username: 'cloud-2', password: 'cloud-2-password', roles: [{ rolename: 'cncgw-cloud' }] },
      { command: 'createClient', ...ADMIN_2, roles: [{ rolename: 'admin' }] },
      { command: 'createRole', rolename: 'watcher' },
      acl('watcher', 'subscribePattern', `${prefix}/gateways/+/presence`),
      acl('watcher', 'publishClientReceive', `${prefix}/gateways/+/presence`),
      { command: 'createClient', ...WATCHER, roles: [{ rolename: 'watcher' }] },
    ]);
    expect(answers.filter((a) => a.error)).toEqual([]);
    await setup.close();
    const start = (user: string, admin: { username: string; password: string }) => startTestCloud({
      databaseUrl,
      broker: { url: broker.url, protocolVersion: 5, username: user, password: `${user}-password`, reconnectMaxMs: 2000 },
      dynamicSecurity: admin,
    });
    // Both start together on an empty database: its tables are made once.
    [one, two] = await Promise.all([start('cloud-1', { username: ADMIN_1.adminUsername, password: ADMIN_1.adminPassword }), start('cloud-2', ADMIN_2)]);
    urls.push(await one.listen('127.0.0.1', 0), await two.listen('127.0.0.1', 0));
    // The admin key made by the command line on the shared database opens both instances' admin interfaces.
    const made = cli(databaseUrl, 'admin', 'create', 'ops');
    expect(made.status, made.stderr).toBe(0);
    // It names the database it wrote to (server and database, never the user or password) and the clouds that use it.
    const target = new URL(databaseUrl);
    expect(made.stderr).toContain(`tokens written to postgresql://${target.hostname}:${target.port}${target.pathname} (PostgreSQL)`);
    expect(made.stderr).toMatch(/last used by the cloud on \S+, started \d{4}-/);
    expect(made.stderr).not.toContain('warning');
    expect(made.stderr + made.stdout).not.toContain(target.password || 'no password in the URL');
    adminKey = /cadm_[A-Za-z0-9]+_[A-Za-z0-9_-]+/.exec(made.stdout)?.[0] as string;
  }, 90_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    await one?.stop();
    await two?.stop();
    await broker?.stop();
  });

  it('tokens made through one instance\'s admin interface: three gateways are accepted by the broker and answer through the other instance\'s /mcp', async () => {
    expect((await admin(1, '')).status).toBe(200);
    for (const name of ['plant-1', 'plant-2', 'plant-3']) {
      const made = await admin(0, '', { name });
      expect(made.status).toBe(201);
      tokens.push(made.json.token as string);
    }
    for (const [i, token] of tokens.entries()) {
      gateways.push(await startTestGateway({ gateway: { name: `plant-${i + 1}` }, machines: [simMachine(`M${i + 1}`)], cloudLink: { brokerUrl: broker.url, accessToken: token, reconnectMaxSeconds: 2 } }));
    }
    for (const token of tokens) {
      await untilOnline(two, token);
      await untilOnline(one, token);
    }
    for (const [i, token] of tokens.entries()) {
      expect((await (await session(1, token)).call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: `M${i + 1}` })] });
    }
    // Listed alike by both.
    expect(((await admin(1, '')).json.tokens as { id: string }[]).map((t) => t.id).sort()).toEqual(tokens.map(idOf).sort());
  });

  it('a token rotated through one instance: both refuse the old one within 5 s, the broker refuses it, and its gateway given the new one answers through the other', async () => {
    const old = tokens[1] as string;
    const oldSession = await session(1, old);
    const rotated = await admin(0, `/${idOf(old)}/rotate`, {});
    expect(rotated).toMatchObject({ status: 201, json: { replaces: idOf(old) } });
    const next = rotated.json.token as string;
    await within(5000, 'the other instance refuses the old token', async () => (await oldSession.call('list_machines')).text === UNKNOWN);
    expect((await (await session(0, old)).call('list_machines')).text).toBe(UNKNOWN);
    expect(await brokerTakes(idOf(old), old)).toMatch(/Not authorized|Bad user name or password/i);
    const set = await (gateways[1] as TestGateway).request('POST', '/api/security/cloud-link/set', { accessToken: next });
    expect(set.body.errorCode).toBe(0);
    await untilOnline(two, next);
    expect((await (await session(1, next)).call('list_machines')).json()).toMatchObject({ machines: [expect.objectContaining({ machineID: 'M2' })] });
    tokens[1] = next;
  });

  it('a token revoked through one instance: its gateway is removed from the broker, both refuse it within 5 s, no consumer sees it online, and the others keep answering', async () => {
    const revoked = tokens[2] as string;
    const id = idOf(revoked);
    expect(await retainedPresence(id)).toMatch(/"state":"online"/);
    const throughTwo = await session(1, revoked);
    const revokedAt = Date.now();
    expect(await admin(0, `/${id}/revoke`, {})).toEqual({ status: 200, json: { revoked: id } });
    await within(5000, 'the other instance refuses the revoked token', async () => (await throughTwo.call('list_machines')).text === UNKNOWN);
    await within(5000, 'the other instance sees the gateway gone', () => !two.relay.isOnline(id));
    await within(5000, 'the gateway sees its link ended', async () => !((await (gateways[2] as TestGateway).request('GET', '/api/system/gateway-info')).body.data as { cloud: CloudLinkStatus }).cloud.connected);
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    expect(await brokerTakes(id, revoked)).toMatch(/Not authorized|Bad user name or password/i);
    // The broker publishes no will for a removed client: the cloud cleared the retained presence itself.
    expect(await retainedPresence(id)).not.toMatch(/"state":"online"/);
    for (const [i, token] of tokens.slice(0, 2).entries()) {
      expect((await (await session(1, token)).call('list_machines')).json()).toMatchObject({ machines: [expect.objectContaining({ machineID: `M${i + 1}` })] });
    }
    // No file of the broker was edited: every change went through the plugin's API.
  });
});

describe('two cloud instances on one PostgreSQL, each with its embedded broker', { timeout: 60_000 }, () => {
  it('a gateway connected to one instance is disconnected within 5 s when its token is revoked through the other', async () => {
    const databaseUrl = await postgres.createDatabase();
    const [one, two] = await Promise.all([startTestCloud({ databaseUrl, revocationSweepMs: 60_000 }), startTestCloud({ databaseUrl, revocationSweepMs: 60_000 })]);
    try {
      const url = await one.listen('127.0.0.1', 0);
      const key = (await one.adminKeys.create('ops')).token;
      const made = (await (await fetch(new URL('/admin/gateway-tokens', url), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"plant-e"}' })).json()) as { token: string };
      const link = await lightLink(two.brokerUrl as string, made.token);
      await untilOnline(two, made.token);
      const closed = new Promise<number>((r) => link.once('close', () => r(Date.now())));
      const revokedAt = Date.now();
      const answer = await fetch(new URL(`/admin/gateway-tokens/${idOf(made.token)}/revoke`, url), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
      expect(answer.status).toBe(200);
      expect((await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(Infinity), 6000))])) - revokedAt).toBeLessThan(5000);
      expect(two.relay.isOnline(idOf(made.token))).toBe(false);
      expect(await two.tokens.verify(made.token)).toBeUndefined();
      await link.endAsync(true);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });
});
