/**
 * A link refused by its broker keeps trying: exponential backoff with jitter
 * up to a cap, the cause logged once per change, the state shown. For the
 * gateway's cloud link (in gateway-info) and for the cloud's own client of
 * an external broker; the brokers here are aedes with a switch standing for
 * "the user exists now" (test/peers/cloud-acl.test.ts does it on Mosquitto).
 */
import { Writable } from 'node:stream';
import { connect } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { createBearerToken } from '../../core/auth/bearer-tokens.js';
import { GATEWAY_TOKEN_PREFIX } from '../../core/roles/cloud/tokens.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { Backoff } from '../../core/mqtt/backoff.js';
import { startMqttBroker, type InProcessBroker } from '../../core/mqtt/broker.js';
import { Reconnector } from '../../core/mqtt/reconnect.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import { lightLink, startTestCloud } from '../fixtures/cloud.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits up to `ms` for `check`; whether it came true (the test asserts what it saw). */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (await check()) return true;
  return check();
}

describe('backoff', () => {
  it('doubles from the first step to the cap; each wait is between half and all of its step', () => {
    const low = new Backoff({ firstMs: 1000, capMs: 60_000, random: () => 0 });
    expect(Array.from({ length: 9 }, () => low.next())).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(low.failedAttempts).toBe(9);
    const high = new Backoff({ firstMs: 1000, capMs: 60_000, random: () => 0.999_999 });
    expect(Array.from({ length: 9 }, () => high.next())).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('jitter spreads the waits of clients refused together; a reset starts from the first step again; the cap holds after any number of failures', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const waits = Array.from({ length: 50 }, () => new Backoff({ random }).next());
    expect(new Set(waits).size).toBeGreaterThan(40);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...waits)).toBeLessThanOrEqual(1000);
    const b = new Backoff({ capMs: 5000, random: () => 0.5 });
    for (let i = 0; i < 2000; i++) expect(b.next()).toBeLessThanOrEqual(5000);
    b.reset();
    expect([b.failedAttempts, b.next()]).toEqual([0, 750]);
    // A first step above the cap is the cap.
    expect(new Backoff({ firstMs: 10_000, capMs: 2000, random: () => 0 }).next()).toBe(1000);
  });
});

describe('reconnecting after a refusal', { timeout: 30_000 }, () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  it('keeps trying after CONNACK refusals, logs each cause once, comes up when the broker accepts, and starts over after a lost connection', async () => {
    let accept = false;
    const broker = await startMqttBroker({ authenticate: () => accept });
    cleanup.push(() => broker.stop());
    const lines: { level: number; msg: string; cause?: string }[] = [];
    const logger = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => void (lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]), done()) }));
    const client = connect(broker.url, { protocolVersion: 4, clientId: 'c1', username: 'u', password: 'p', reconnectPeriod: 0 });
    const retry = new Reconnector(client, { name: 'test link', logger, backoff: new Backoff({ firstMs: 20, capMs: 80 }) });
    cleanup.push(() => client.endAsync(true), async () => retry.stop());
    const warnings = () => lines.filter((l) => l.level === 40);

    expect(await within(10_000, () => retry.status().failedAttempts >= 5)).toBe(true);
    expect(retry.status()).toMatchObject({ state: expect.stringMatching(/^(retrying|connecting)$/) });
    // Five refusals, one cause: one warning.
    expect(warnings().map((l) => l.cause)).toEqual(['Connection refused: Bad username or password (code 4)']);
    expect(lines.filter((l) => l.level === 20).length).toBeGreaterThanOrEqual(4);

    accept = true;
    expect(await within(5000, () => client.connected)).toBe(true);
    expect(retry.status()).toEqual({ state: 'connected', failedAttempts: 0 });
    expect(lines.some((l) => l.level === 30 && /connected to the broker after \d+ failed attempts/.test(l.msg))).toBe(true);

    // The broker goes away: a new cause, logged once however often it is tried; back when the broker is.
    await broker.stop();
    expect(await within(5000, () => retry.status().failedAttempts >= 3)).toBe(true);
    expect(warnings()).toHaveLength(3);
    expect(warnings().slice(1).map((l) => l.cause)).toEqual(['the connection was closed', expect.stringMatching(/ECONNREFUSED/)]);
    await broker.start();
    expect(await within(5000, () => client.connected)).toBe(true);
  });

  it('the gateway\'s cloud link refused by its broker keeps trying with backoff, shows why in gateway-info, and comes up by itself once accepted', async () => {
    let accept = false;
    const broker = await startMqttBroker({ authenticate: () => accept });
    cleanup.push(() => broker.stop());
    const token = createBearerToken(GATEWAY_TOKEN_PREFIX);
    const gw = await startTestGateway({ gateway: { name: 'plant-r' }, machines: [simMachine('R1')], cloudLink: { brokerUrl: broker.url, accessToken: token.key, reconnectMaxSeconds: 1 } });
    cleanup.push(() => gw.stop());
    const cloud = async () => ((await gw.request('GET', '/api/system/gateway-info')).body.data as { cloud: CloudLinkStatus }).cloud;

    const refusedTwice = await within(10_000, async () => ((await cloud()).failedAttempts ?? 0) >= 2);
    const whileRefused = await cloud();
    accept = true;
    // The cap is 1 s: the next attempt starts within it.
    const cameUp = await within(3000, async () => (await cloud()).connected);
    expect({ refusedTwice, cameUp }).toEqual({ refusedTwice: true, cameUp: true });
    expect(whileRefused).toMatchObject({ connected: false, state: expect.stringMatching(/^(retrying|connecting)$/), lastError: expect.stringMatching(/Bad username or password/) });
    expect(await cloud()).toMatchObject({ connected: true, state: 'connected', failedAttempts: 0 });
    expect(JSON.stringify(await cloud())).not.toContain(token.key);
  });

  it('the cloud\'s own client of an external broker starts though refused, keeps trying, and serves once accepted', async () => {
    let accept = false;
    const broker: InProcessBroker = await startMqttBroker({ authenticate: (username) => username !== 'cloud-1' || accept });
    cleanup.push(() => broker.stop());
    const cloud = await startTestCloud({ broker: { url: broker.url, protocolVersion: 4, username: 'cloud-1', password: 'pw', reconnectMaxMs: 1000 } });
    cleanup.push(() => cloud.stop());
    const token = (await cloud.tokens.create('plant-s')).token;
    const link = await lightLink(broker.url, token);
    cleanup.push(() => link.endAsync());
    const refused = await within(10_000, () => (cloud.relay.brokerLink()?.failedAttempts ?? 0) >= 2);
    expect({ refused, online: cloud.relay.isOnline(token.split('_')[1] as string) }).toEqual({ refused: true, online: false });
    accept = true;
    expect(await within(3000, () => cloud.relay.isOnline(token.split('_')[1] as string))).toBe(true);
    expect(cloud.relay.brokerLink()).toEqual({ state: 'connected', failedAttempts: 0 });
  });
});
