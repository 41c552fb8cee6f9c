/**
 * The gateways' broker users kept through Mosquitto's dynamic security
 * plugin (core/mqtt/dynamic-security.ts) on Debian's Mosquitto, set up as
 * its documentation says (mosquitto_ctrl dynsec init): a gateway's client
 * is made at once with its token as password, reaches its own topics only,
 * a changed password takes effect, a removed client is disconnected at once
 * without its last will, and clients the cloud did not make are not touched.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC_PREFIX, gatewayClientId } from '../../core/cloud-wire/protocol.js';
import { MosquittoDynamicSecurity } from '../../core/mqtt/dynamic-security.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const prefix = DEFAULT_TOPIC_PREFIX;
const ADMIN = { adminUsername: 'cloud-admin', adminPassword: 'cloud-admin-password' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('gateway broker users through Mosquitto dynamic security', { timeout: 60_000 }, () => {
  let broker: MosquittoController;
  let dynsec: MosquittoDynamicSecurity;
  let observer: MqttClient;
  const seen: string[] = [];
  const clients: MqttClient[] = [];
  const gateway = async (tokenId: string, token: string, will?: string): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(broker.url, {
      username: tokenId, password: token, clientId: gatewayClientId(tokenId), protocolVersion: 5, reconnectPeriod: 0,
      ...(will ? { will: { topic: `${prefix}/gateways/${tokenId}/presence`, payload: Buffer.from(will), qos: 1, retain: false } } : {}),
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    broker = await startMosquitto({ dynamicSecurity: ADMIN, listenerLines: ['use_username_as_clientid true'] });
    dynsec = await MosquittoDynamicSecurity.connect({ url: broker.url, username: ADMIN.adminUsername, password: ADMIN.adminPassword, topicPrefix: prefix });
    // A cloud instance's user, watching every presence and answer (its own user: with use_username_as_clientid, sharing the admin's would take its session over).
    const cloudAcls = [['publishClientReceive', `${prefix}/#`], ['subscribePattern', `${prefix}/#`]].map(([acltype, topic]) => ({ command: 'addRoleACL', rolename: 'cloud', acltype, topic, allow: true }));
    const answers = await dynsec.send([
      { command: 'createRole', rolename: 'cloud' }, ...cloudAcls,
      { command: 'createClient', username: 'cloud-1', password: 'cloud-1-password', roles: [{ rolename: 'cloud' }] },
    ]);
    expect(answers.filter((a) => a.error)).toEqual([]);
    observer = await mqtt.connectAsync(broker.url, { username: 'cloud-1', password: 'cloud-1-password', clientId: 'cloud-1', protocolVersion: 5, reconnectPeriod: 0 });
    await observer.subscribeAsync(`${prefix}/#`, { qos: 1 });
    observer.on('message', (topic, payload) => seen.push(`${topic} ${payload.toString()}`));
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => undefined);
    await observer?.endAsync(true);
    await dynsec?.close();
    await broker?.stop();
  });

  it('a token\'s client is made at once and reaches its own topics only', async () => {
    await dynsec.addGateway('t1', 'cgw_t1_secret-one');
    await dynsec.addGateway('t2', 'cgw_t2_secret-two');
    await expect(gateway('t1', 'wrong')).rejects.toThrow(/Not authorized|Bad user name or password/i);
    const t1 = await gateway('t1', 'cgw_t1_secret-one');
    await t1.publishAsync(`${prefix}/gateways/t1/presence`, 'online-t1', { qos: 1 });
    await t1.publishAsync(`${prefix}/clouds/c1/responses/t1`, 'answer-t1', { qos: 1 });
    // Another gateway's topics: the broker drops these (MQTT 5 PUBACK 135) and refuses the subscription.
    await t1.publishAsync(`${prefix}/gateways/t2/presence`, 'forged-presence', { qos: 1 }).catch(() => undefined);
    await t1.publishAsync(`${prefix}/clouds/c1/responses/t2`, 'forged-answer', { qos: 1 }).catch(() => undefined);
    const own = await t1.subscribeAsync(`${prefix}/gateways/t1/requests`, { qos: 1 });
    expect(own.map((g) => g.qos)).toEqual([1]);
    await expect(t1.subscribeAsync(`${prefix}/gateways/t2/requests`, { qos: 1 })).rejects.toThrow(/Not authorized/);
    await sleep(300);
    expect(seen).toContain(`${prefix}/gateways/t1/presence online-t1`);
    expect(seen).toContain(`${prefix}/clouds/c1/responses/t1 answer-t1`);
    expect(seen.filter((s) => s.includes('forged'))).toEqual([]);
  });

  it('a new password takes effect for the next connection', async () => {
    await dynsec.addGateway('t2', 'cgw_t2_secret-rotated');
    await expect(gateway('t2', 'cgw_t2_secret-two')).rejects.toThrow(/Not authorized|Bad user name or password/i);
    const t2 = await gateway('t2', 'cgw_t2_secret-rotated');
    expect(t2.connected).toBe(true);
  });

  it('a removed client is disconnected at once, without its last will, and cannot come back', async () => {
    await dynsec.addGateway('t3', 'cgw_t3_secret-three');
    const t3 = await gateway('t3', 'cgw_t3_secret-three', 'offline-will-t3');
    const closed = new Promise<number>((resolve) => t3.once('close', () => resolve(Date.now())));
    const removedAt = Date.now();
    await dynsec.removeGateway('t3');
    expect((await closed) - removedAt).toBeLessThan(2000);
    await sleep(300);
    expect(seen.filter((s) => s.includes('offline-will-t3'))).toEqual([]);
    await expect(gateway('t3', 'cgw_t3_secret-three')).rejects.toThrow(/Not authorized|Bad user name or password/i);
    await dynsec.removeGateway('t3');
  });

  it('only the clients the cloud made are listed as gateways; others are left alone', async () => {
    const [made] = await dynsec.send([{ command: 'createClient', username: 'plant-historian', password: 'historian-password' }]);
    expect(made?.error).toBeUndefined();
    expect((await dynsec.gatewayClients()).sort()).toEqual(['t1', 't2']);
    const [listed] = await dynsec.send([{ command: 'listClients', count: -1, offset: 0 }]);
    expect(listed?.data?.clients).toEqual(expect.arrayContaining(['plant-historian', 'cloud-1', ADMIN.adminUsername, 't1', 't2']));
  });
});
