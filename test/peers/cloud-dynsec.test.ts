/**
 * The cloud keeping the gateways' broker clients on a Mosquitto with its
 * dynamic security plugin (`cloud.dynamicSecurity`), set up as
 * docs/cloud-relay.md tells an operator: the plugin, `mosquitto_ctrl dynsec
 * init` with the cloud's admin client, the cloud's own relay user made
 * through the plugin, and `use_username_as_clientid`. Tokens made, rotated
 * and revoked through the cloud's admin interface change the broker at once,
 * nobody edits a file, and clients the cloud did not make are left alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC_PREFIX, textLiteral, type RelayRequest } from '../../core/cloud-wire/protocol.js';
import { MosquittoDynamicSecurity } from '../../core/mqtt/dynamic-security.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { brokerTakes as takes, tokenAdmin } from './cloud-admin.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const prefix = DEFAULT_TOPIC_PREFIX;
const ADMIN = { adminUsername: 'cloud-admin', adminPassword: 'cloud-admin-password' };
const OUTSIDE = { username: 'plant-historian', password: 'historian-password' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idOf = (token: string) => token.split('_')[1] as string;
const ROOT = resolve(import.meta.dirname, '../..');
/** The command line's own admin client: with use_username_as_clientid, sharing the cloud's would take its session over. */
const CLI_ADMIN = { username: 'cli-admin', password: 'cli-admin-password' };

describe('the cloud keeps the gateways\' broker clients through Mosquitto dynamic security', { timeout: 90_000 }, () => {
  let broker: MosquittoController;
  let cloud: CloudRole;
  let url: string;
  let adminKey: string;
  const closers: (() => Promise<unknown>)[] = [];
  const session = async (token: string): Promise<McpSession> => {
    const s = await connectMcp(url, undefined, { accesstoken: token });
    closers.push(() => s.close());
    return s;
  };
  const admin = async (path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }> => tokenAdmin(url, adminKey, path, body);
  /** Whether the broker takes these credentials now: 'accepted', or its refusal. */
  const brokerTakes = (username: string, password: string): Promise<string> => takes(broker.url, username, password);

  beforeAll(async () => {
    broker = await startMosquitto({ dynamicSecurity: ADMIN, listenerLines: ['use_username_as_clientid true'] });
    // The operator's one-time setup through the plugin: the cloud's relay user, a client of another program, and a gateway client left from an unknown token.
    const setup = await MosquittoDynamicSecurity.connect({ url: broker.url, username: ADMIN.adminUsername, password: ADMIN.adminPassword, topicPrefix: prefix });
    const cloudAcls = [['publishClientSend', `${prefix}/gateways/+/requests`], ['publishClientSend', `${prefix}/gateways/+/presence`], ['subscribePattern', `${prefix}/#`], ['publishClientReceive', `${prefix}/#`]]
      .map(([acltype, topic]) => ({ command: 'addRoleACL', rolename: 'cloud', acltype, topic, allow: true }));
    const answers = await setup.send([
      { command: 'createRole', rolename: 'cloud' }, ...cloudAcls,
      { command: 'createClient', username: 'cloud-1', password: 'cloud-1-password', roles: [{ rolename: 'cloud' }] },
      { command: 'createClient', ...OUTSIDE },
      { command: 'createClient', ...CLI_ADMIN, roles: [{ rolename: 'admin' }] },
    ]);
    expect(answers.filter((a) => a.error)).toEqual([]);
    await setup.addGateway('orphan', 'cgw_orphan_secret');
    // With use_username_as_clientid the cloud's admin connection would take this one's over: one admin connection at a time.
    await setup.close();
    cloud = await startTestCloud({
      broker: { url: broker.url, protocolVersion: 5, username: 'cloud-1', password: 'cloud-1-password', reconnectMaxMs: 2000 },
      dynamicSecurity: { username: ADMIN.adminUsername, password: ADMIN.adminPassword },
    });
    url = await cloud.listen('127.0.0.1', 0);
    adminKey = (await cloud.adminKeys.create('operator')).token;
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cloud?.stop();
    await broker?.stop();
  });

  it('at start the cloud removes the broker clients it made for unknown tokens, and leaves clients it did not make alone', async () => {
    expect(await brokerTakes('orphan', 'cgw_orphan_secret')).toMatch(/Not authorized|Bad user name or password/i);
    expect(await brokerTakes(OUTSIDE.username, OUTSIDE.password)).toBe('accepted');
  });

  it('a token made through the admin interface is the broker password of its gateway at once, which then answers through /mcp', async () => {
    const made = await admin('', { name: 'plant-a' });
    expect(made.status).toBe(201);
    const token = made.json.token as string;
    // The first attempt right after the answer is taken: the client was added before the token was.
    expect(await brokerTakes(idOf(token), token)).toBe('accepted');
    const gw: TestGateway = await startTestGateway({ gateway: { name: 'plant-a' }, machines: [simMachine('A1')], cloudLink: { brokerUrl: broker.url, accessToken: token, reconnectMaxSeconds: 2 } });
    closers.push(() => gw.stop());
    await untilOnline(cloud, token);
    expect((await (await session(token)).call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'A1' })] });
    expect(((await gw.request('GET', '/api/system/gateway-info')).body.data as { cloud: CloudLinkStatus }).cloud).toMatchObject({ connected: true, failedAttempts: 0 });
  });

  it('a token revoked through the admin interface: its gateway is disconnected at once, its pending call answers unavailable, and it cannot come back', async () => {
    const token = (await admin('', { name: 'plant-b' })).json.token as string;
    const held: RelayRequest[] = [];
    const link = await lightLink(broker.url, token, textLiteral('{}'), (request) => held.push(request));
    closers.push(() => link.endAsync(true));
    await untilOnline(cloud, token);
    const closed = new Promise<number>((resolve) => link.once('close', () => resolve(Date.now())));
    const call = (await session(token)).call('list_groups').then((answer) => ({ answer, at: Date.now() }));
    for (let i = 0; i < 200 && held.length === 0; i++) await sleep(25);
    expect(held).toHaveLength(1);
    const revokedAt = Date.now();
    expect(await admin(`/${idOf(token)}/revoke`, {})).toEqual({ status: 200, json: { revoked: idOf(token) } });
    const { answer, at } = await call;
    expect({ isError: answer.isError, text: answer.text }).toMatchObject({ isError: true, text: expect.stringMatching(/GATEWAY_SERVICE_UNAVAILABLE/) });
    // Ended by the revocation, long before the call's deadline; the broker ended the link as soon as the client was removed.
    expect(at - revokedAt).toBeLessThan(2000);
    expect((await closed) - revokedAt).toBeLessThan(2000);
    expect(cloud.relay.isOnline(idOf(token))).toBe(false);
    expect(await brokerTakes(idOf(token), token)).toMatch(/Not authorized|Bad user name or password/i);
  });

  it('a token rotated through the admin interface: the old one is refused by the broker, the new one works, and the outside client is still there', async () => {
    const old = (await admin('', { name: 'plant-c' })).json.token as string;
    const oldLink = await lightLink(broker.url, old);
    closers.push(() => oldLink.endAsync(true));
    await untilOnline(cloud, old);
    const closed = new Promise<void>((resolve) => oldLink.once('close', () => resolve()));
    const rotated = await admin(`/${idOf(old)}/rotate`, {});
    expect(rotated).toMatchObject({ status: 201, json: { replaces: idOf(old), shownOnce: true } });
    const token = rotated.json.token as string;
    await closed;
    expect(await brokerTakes(idOf(old), old)).toMatch(/Not authorized|Bad user name or password/i);
    const link = await lightLink(broker.url, token, textLiteral('{"from":"plant-c"}'));
    closers.push(() => link.endAsync(true));
    await untilOnline(cloud, token);
    expect((await (await session(token)).call('list_groups')).text).toBe('{"from":"plant-c"}');
    expect(await brokerTakes(OUTSIDE.username, OUTSIDE.password)).toBe('accepted');
  });

  it('npm run cloud-token with cloud.dynamicSecurity changes the broker\'s clients as the admin interface does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloud-cli-'));
    const config = join(dir, 'cloud.json');
    writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), cloud: { brokerUrl: broker.url, dynamicSecurity: { username: CLI_ADMIN.username } } }));
    const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', ...args, '--config', config], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_DATA_DIR: '', CLOUD_DYNSEC_PASSWORD: CLI_ADMIN.password },
    });
    const tokenIn = (out: string) => /cgw_[A-Za-z0-9]+_[A-Za-z0-9_-]+/.exec(out)?.[0] as string;
    const made = cli('create', 'plant-d');
    expect(made.status, made.stderr).toBe(0);
    const first = tokenIn(made.stdout);
    expect(await brokerTakes(idOf(first), first)).toBe('accepted');
    const rotated = cli('rotate', idOf(first));
    expect(rotated.status, rotated.stderr).toBe(0);
    const second = tokenIn(rotated.stdout.split('\n').slice(1).join('\n'));
    expect(await brokerTakes(idOf(first), first)).toMatch(/Not authorized|Bad user name or password/i);
    expect(await brokerTakes(idOf(second), second)).toBe('accepted');
    const revoked = cli('revoke', idOf(second));
    expect([revoked.status, revoked.stdout]).toEqual([0, expect.stringMatching(/broker client removed/)]);
    expect(await brokerTakes(idOf(second), second)).toMatch(/Not authorized|Bad user name or password/i);
    expect(await brokerTakes(OUTSIDE.username, OUTSIDE.password)).toBe('accepted');
  });

  it('with the broker away, creating a token answers 503 broker_unavailable and stores nothing', async () => {
    const before = ((await admin('')).json.tokens as unknown[]).length;
    await broker.stop();
    try {
      const made = await admin('', { name: 'plant-away' });
      expect(made).toMatchObject({ status: 503, json: { error: 'broker_unavailable' } });
      expect(((await admin('')).json.tokens as unknown[]).length).toBe(before);
    } finally {
      await broker.start();
    }
  });
});
