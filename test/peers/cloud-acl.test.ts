/**
 * The relay on a Mosquitto set up as docs/cloud-relay.md tells an operator
 * (password file, the ACL patterns, use_username_as_clientid): a gateway and
 * a cloud that start before their broker users exist are refused, keep
 * trying with backoff and come up by themselves within the cap once the
 * users are added (mosquitto_passwd and SIGHUP); then a gateway using
 * another's client id cannot push it off, and an answer published from
 * another gateway's connection does not reach the client.
 */
import { connect } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerPayloads, DEFAULT_TOPIC_PREFIX, gatewayClientId, textLiteral, type RelayRequest } from '../../core/cloud-wire/protocol.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const prefix = DEFAULT_TOPIC_PREFIX;
/** The ACL of docs/cloud-relay.md, word for word. */
const ACL = `pattern write ${prefix}/gateways/%u/presence
pattern read ${prefix}/gateways/%u/requests
pattern write ${prefix}/clouds/+/responses/%u

user cloud-1
topic readwrite ${prefix}/gateways/+/presence
topic write ${prefix}/gateways/+/requests
topic read ${prefix}/clouds/+/responses/+
`;
/** The caps of both sides' backoff in this test. */
const CAP_S = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(25)) if (await check()) return true;
  return check();
}

describe('cloud relay on a Mosquitto with users, ACL and client ids bound to users', { timeout: 90_000 }, () => {
  let broker: MosquittoController;
  let cloud: CloudRole;
  let url: string;
  let gwB: TestGateway;
  const token: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  const idOf = (t: string) => t.split('_')[1] as string;
  const closers: (() => Promise<unknown>)[] = [];
  const session = async (t: string): Promise<McpSession> => {
    const s = await connectMcp(url, undefined, { accesstoken: t });
    closers.push(() => s.close());
    return s;
  };
  const linkOf = async () => ((await gwB.request('GET', '/api/system/gateway-info')).body.data as { cloud: CloudLinkStatus }).cloud;

  beforeAll(async () => {
    // No users yet: neither the cloud nor the gateway may connect.
    broker = await startMosquitto({ users: {}, acl: ACL, listenerLines: ['use_username_as_clientid true'] });
    cloud = await startTestCloud({ broker: { url: broker.url, protocolVersion: 5, username: 'cloud-1', password: 'cloud-1-password', reconnectMaxMs: CAP_S * 1000 } });
    url = await cloud.listen('127.0.0.1', 0);
    for (const name of ['a', 'b', 'c'] as const) token[name] = (await cloud.tokens.create(`plant-${name}`)).token;
    gwB = await startTestGateway({ gateway: { name: 'plant-b' }, machines: [simMachine('B1')], cloudLink: { brokerUrl: broker.url, accessToken: token.b, reconnectMaxSeconds: CAP_S } });
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await gwB?.stop();
    await cloud?.stop();
    await broker?.stop();
  });

  it('a gateway and a cloud started before their broker users exist come up by themselves within the backoff cap once the users are added', async () => {
    const refused = await within(20_000, async () => ((await linkOf()).failedAttempts ?? 0) >= 3 && (cloud.relay.brokerLink()?.failedAttempts ?? 0) >= 3);
    const whileRefused = { gateway: await linkOf(), cloud: cloud.relay.brokerLink() };
    for (const name of ['a', 'b', 'c'] as const) broker.addUser(idOf(token[name]), token[name]);
    broker.addUser('cloud-1', 'cloud-1-password');
    // The next attempt of each starts within the cap; the rest covers Mosquitto's reload, the connection and the presence on a busy machine.
    const cameUp = await within((CAP_S + 3) * 1000, async () => (await linkOf()).connected && cloud.relay.isOnline(idOf(token.b)));
    expect({ refused, cameUp }).toEqual({ refused: true, cameUp: true });
    expect(whileRefused.gateway).toMatchObject({ connected: false, lastError: expect.stringMatching(/not authori[sz]ed|bad user ?name or password/i) });
    expect(whileRefused.cloud?.state).toMatch(/^(retrying|connecting)$/);
    expect(await linkOf()).toMatchObject({ state: 'connected', failedAttempts: 0, protocolVersion: 5 });
    // The ACL lets the relay's own traffic through: a request, an answer on the gateway's answer topic.
    expect((await (await session(token.b)).call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'B1' })] });
  });

  it('a gateway connecting with another gateway\'s client id cannot push it off: the broker gives it its own user name as client id', async () => {
    const b = await session(token.b);
    const seen: { online: boolean; answer: string }[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const intruder = connect(broker.url, { protocolVersion: 5, clientId: gatewayClientId(idOf(token.b)), username: idOf(token.a), password: token.a, reconnectPeriod: 0 });
      await new Promise<void>((resolve, reject) => {
        intruder.once('connect', () => resolve());
        intruder.once('error', reject);
      });
      await intruder.endAsync();
      const answer = await b.call('list_machines');
      seen.push({ online: cloud.relay.isOnline(idOf(token.b)), answer: answer.isError ? answer.text.slice(0, 80) : `${String(answer.json().count)} machine` });
    }
    expect(seen).toEqual(Array.from({ length: 20 }, () => ({ online: true, answer: '1 machine' })));
    expect(await linkOf()).toMatchObject({ connected: true, failedAttempts: 0 });
  });

  it('an answer for C\'s call published from A\'s connection does not reach the client; C\'s own answer does', async () => {
    const held: { request: RelayRequest; reply: () => Promise<void> }[] = [];
    const c = await lightLink(broker.url, token.c, textLiteral('{"from":"plant-c"}'), (request, reply) => held.push({ request, reply }));
    closers.push(() => c.endAsync());
    await untilOnline(cloud, token.c);
    let settled = false;
    const call = (await session(token.c)).call('list_groups').finally(() => {
      settled = true;
    });
    expect(await within(5000, () => held.length > 0)).toBe(true);
    const { request, reply } = held[0]!;
    const forged = answerPayloads(request.id, textLiteral('{"from":"plant-a"}'), false)[0]!;
    const responses = request.replyTo.replace(/\/[^/]+$/, '');
    const a = await connect(broker.url, { protocolVersion: 5, username: idOf(token.a), password: token.a, reconnectPeriod: 0 });
    closers.push(() => a.endAsync());
    await new Promise((resolve) => a.once('connect', resolve));
    // Mosquitto drops what its ACL refuses (an MQTT 5 client hears "not authorized" in the PUBACK); the cloud drops what A sends on its own topic.
    const codes: (number | undefined)[] = [];
    for (const topic of [responses, `${responses}/${idOf(token.c)}`, `${responses}/${idOf(token.a)}`]) {
      codes.push(await new Promise<number | undefined>((resolve) => a.publish(topic, forged, { qos: 1 }, (err) => resolve((err as { code?: number } | undefined)?.code ?? 0))));
    }
    await sleep(200);
    const settledBeforeC = settled;
    await reply();
    expect({ codes, settledBeforeC, answer: (await call).text }).toEqual({ codes: [135, 135, 0], settledBeforeC: false, answer: '{"from":"plant-c"}' });
  });
});
