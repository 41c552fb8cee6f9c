/**
 * An answer counts only from the gateway the call went to: a gateway that
 * learns another's correlation id and publishes an answer for it (on the
 * cloud's response topic, on its own answer topic or on the other
 * gateway's) does not reach the MCP client; the asked gateway's answer does.
 */
import { connect } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBearerToken } from '../../core/auth/bearer-tokens.js';
import { answerPayloads, DEFAULT_TOPIC_PREFIX, gatewayClientId, readPart, textLiteral, topics, type RelayRequest } from '../../core/cloud-wire/protocol.js';
import { GATEWAY_TOKEN_PREFIX } from '../../core/roles/cloud/tokens.js';
import { startMqttBroker } from '../../core/mqtt/broker.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';

const prefix = DEFAULT_TOPIC_PREFIX;
const idOf = (token: string) => token.split('_')[1] as string;

/** Publishes `payload` on `topic` from a fresh connection with these credentials: whether the broker took it (PUBACK) or closed the connection. */
function publishAs(url: string, token: string, topic: string, payload: Buffer): Promise<'acknowledged' | 'refused'> {
  return new Promise((resolve, reject) => {
    const id = idOf(token);
    const client = connect(url, { protocolVersion: 4, clientId: gatewayClientId(id), username: id, password: token, reconnectPeriod: 0 });
    client.once('error', reject);
    client.once('connect', () => {
      const refused = () => resolve('refused');
      client.once('close', refused);
      client.publish(topic, payload, { qos: 1 }, (err) => {
        if (err) return;
        client.off('close', refused);
        void client.endAsync().then(() => resolve('acknowledged'));
      });
    });
  });
}

describe('relay answers bound to the gateway asked', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let url: string;
  const token = { a: '', c: '' };
  const held: { request: RelayRequest; reply: () => Promise<void> }[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  let session: McpSession;

  beforeAll(async () => {
    cloud = await startTestCloud();
    url = await cloud.listen('127.0.0.1', 0);
    token.a = (await cloud.tokens.create('plant-a')).token;
    token.c = (await cloud.tokens.create('plant-c')).token;
    // C answers when the test says so; its answer is its own text.
    const c = await lightLink(cloud.brokerUrl as string, token.c, textLiteral('{"from":"plant-c"}'), (request, reply) => held.push({ request, reply }));
    closers.push(() => c.endAsync());
    await untilOnline(cloud, token.c);
    session = await connectMcp(url, undefined, { accesstoken: token.c });
    closers.push(() => session.close());
  }, 60_000);
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await cloud?.stop();
  });

  it('an answer for C\'s call published from A\'s connection does not reach the client; C\'s own answer does', async () => {
    let settled = false;
    const call = session.call('list_groups').finally(() => {
      settled = true;
    });
    for (let i = 0; i < 200 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    const { request, reply } = held[0]!;
    // What A would publish had it learnt C's correlation id.
    const forged = answerPayloads(request.id, textLiteral('{"from":"plant-a"}'), false)[0]!;
    const responses = `${prefix}/clouds/${cloud.relay.instanceId}/responses`;
    const outcomes = {
      cloudTopic: await publishAs(cloud.brokerUrl as string, token.a, responses, forged),
      asTheOther: await publishAs(cloud.brokerUrl as string, token.a, `${responses}/${idOf(token.c)}`, forged),
      ownTopic: await publishAs(cloud.brokerUrl as string, token.a, `${responses}/${idOf(token.a)}`, forged),
    };
    const settledBeforeC = settled;
    await reply();
    const answer = await call;
    // The broker refuses A's publishes outside its own answer topic; the cloud drops what A sends there for C's call.
    expect({ outcomes, settledBeforeC, answer: answer.text }).toEqual({
      outcomes: { cloudTopic: 'refused', asTheOther: 'refused', ownTopic: 'acknowledged' },
      settledBeforeC: false,
      answer: '{"from":"plant-c"}',
    });
  });
});

describe('a gateway answers only on its own answer topic of a cloud', { timeout: 60_000 }, () => {
  it('its own topic and a cloud\'s bare response topic (clouds before per-gateway topics) are answered; another gateway\'s topic or one outside the clouds is not', async () => {
    // A broker without rules, as a cloud of an earlier version had: only the gateway's own check stands.
    const broker = await startMqttBroker();
    const token = createBearerToken(GATEWAY_TOKEN_PREFIX);
    const other = createBearerToken(GATEWAY_TOKEN_PREFIX).id;
    const gw = await startTestGateway({ gateway: { name: 'plant-d' }, machines: [simMachine('D1')], cloudLink: { brokerUrl: broker.url, accessToken: token.key, protocolVersion: 4 } });
    const t = topics(prefix);
    const answered = new Set<string>();
    const unsubscribe = await broker.subscribeInProcess(`${prefix}/#`, (topic, payload) => {
      if (readPart(payload)) answered.add(topic);
    });
    try {
      for (let i = 0; i < 200 && !(await broker.retainedInProcess(t.presence(token.id))).some((m) => m.payload.includes('online')); i++) await new Promise((r) => setTimeout(r, 25));
      const replyTos = { own: t.responses('inst', token.id), bare: `${prefix}/clouds/inst/responses`, other: t.responses('inst', other), outside: `${prefix}/gateways/${other}/presence` };
      for (const [n, replyTo] of Object.entries(replyTos)) {
        await broker.publishInProcess(t.requests(token.id), JSON.stringify({ v: 1, id: `call-${n}`, replyTo, deadline: Date.now() + 10_000, method: 'tools/call', params: { name: 'list_groups' } }));
      }
      const cloud = async () => (await gw.request('GET', '/api/system/gateway-info')).body.data as { cloud: { callsAnswered: number; callsDropped: number } };
      for (let i = 0; i < 200 && (await cloud()).cloud.callsAnswered + (await cloud()).cloud.callsDropped < 4; i++) await new Promise((r) => setTimeout(r, 25));
      expect({ answered: [...answered].sort(), counts: (await cloud()).cloud }).toMatchObject({ answered: [replyTos.bare, replyTos.own].sort(), counts: { callsAnswered: 2, callsDropped: 2 } });
    } finally {
      await unsubscribe();
      await gw.stop();
      await broker.stop();
    }
  });
});

