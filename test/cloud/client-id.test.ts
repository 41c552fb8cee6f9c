/**
 * On the cloud's embedded broker a connection's client id is bound to the
 * token that authenticated it: a gateway connecting with its own valid token
 * but another gateway's client id (or any id but its own) is refused, so it
 * cannot take over the other's session, publish its will or push it off the
 * relay.
 */
import { connect, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayClientId } from '../../core/cloud-wire/protocol.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';

/** One connection attempt with these credentials and client id: the CONNACK's refusal code, or 0 when accepted (then closed again). */
function connectOnce(url: string, clientId: string, username: string, password: string): Promise<number> {
  return new Promise((resolve) => {
    const client: MqttClient = connect(url, { protocolVersion: 4, clientId, username, password, reconnectPeriod: 0, connectTimeout: 5000 });
    client.once('connect', () => void client.endAsync(true).then(() => resolve(0)));
    client.once('error', (err: Error & { code?: number | string }) => void client.endAsync(true).then(() => resolve(typeof err.code === 'number' ? err.code : -1)));
  });
}

describe('client ids on the embedded broker', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let url: string;
  let gwB: TestGateway;
  let b: McpSession;
  const token: Record<'a' | 'b', string> = { a: '', b: '' };
  const idOf = (t: string) => t.split('_')[1] as string;

  beforeAll(async () => {
    cloud = await startTestCloud();
    url = await cloud.listen('127.0.0.1', 0);
    token.a = (await cloud.tokens.create('plant-a')).token;
    token.b = (await cloud.tokens.create('plant-b')).token;
    gwB = await startTestGateway({ gateway: { name: 'plant-b' }, machines: [simMachine('B1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token.b } });
    await untilOnline(cloud, token.b);
    b = await connectMcp(url, undefined, { accesstoken: token.b });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await gwB?.stop();
    await cloud?.stop();
  });

  it('a gateway with its own valid token but another gateway\'s client id is refused, and the other keeps answering through 20 attempts', async () => {
    // Each attempt's refusal code, whether the cloud still saw B online, and B's answer right after it.
    const seen: { refusal: number; online: boolean; answer: string }[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const refusal = await connectOnce(cloud.brokerUrl as string, gatewayClientId(idOf(token.b)), idOf(token.a), token.a);
      const online = cloud.relay.isOnline(idOf(token.b));
      const answer = await b.call('list_machines');
      seen.push({ refusal, online, answer: answer.isError ? answer.text.slice(0, 80) : `${String(answer.json().count)} machine` });
    }
    // 2: identifier rejected.
    expect(seen).toEqual(Array.from({ length: 20 }, () => ({ refusal: 2, online: true, answer: '1 machine' })));
  });

  it('only the client id of the token\'s own gateway is taken: not an empty one, another form, nor a cloud\'s', async () => {
    const [user, password] = [idOf(token.a), token.a];
    for (const clientId of ['', `light-${user}`, `${gatewayClientId(user)}x`, user, `cloud-${user}`]) {
      expect(await connectOnce(cloud.brokerUrl as string, clientId, user, password), `client id '${clientId}'`).toBe(2);
    }
    expect(await connectOnce(cloud.brokerUrl as string, gatewayClientId(user), user, password)).toBe(0);
    // Wrong credentials stay a credentials refusal (4), whatever the client id.
    expect(await connectOnce(cloud.brokerUrl as string, gatewayClientId(idOf(token.b)), idOf(token.b), token.a)).toBe(4);
  });
});
