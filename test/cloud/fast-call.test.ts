/**
 * The cloud answers a plain tools/call itself, without building an SDK server
 * for it; everything else goes through the SDK. Each case is sent twice, once
 * as a plain call and once with a Content-Type the SDK takes but the plain
 * path does not (`application/json; charset=utf-8`), and the two answers must
 * be the same bytes: status, content type and body.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { plainToolCall, UNAUTHORIZED_TEXT } from '../../plugins/cloud-mcp/index.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the cloud\'s own answer to a plain tools/call', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let url: string;
  let gw: TestGateway;
  let token: string;
  let offlineToken: string;

  beforeAll(async () => {
    cloud = await startTestCloud();
    url = `${await cloud.listen('127.0.0.1', 0)}/mcp`;
    token = (await cloud.tokens.create('plant')).token;
    offlineToken = (await cloud.tokens.create('never-connected')).token;
    gw = await startTestGateway({ gateway: { name: 'plant' }, machines: [simMachine('M1'), simMachine('M2')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token } });
    await untilOnline(cloud, token);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await cloud?.stop();
  });

  const post = async (body: unknown, headers: Record<string, string>) => {
    const res = await fetch(url, { method: 'POST', headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  };
  /** The same request through the plain path and through the SDK. */
  const both = async (body: unknown, headers: Record<string, string> = {}) => {
    const plain = await post(body, { 'content-type': 'application/json', ...headers });
    const sdk = await post(body, { 'content-type': 'application/json; charset=utf-8', ...headers });
    return { plain, sdk };
  };
  const call = (id: string | number, name: string, args?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args ? { arguments: args } : {}) } });

  it('GW-06 GW-85 a gateway\'s answer, small or large, and its tool errors: the same bytes as the SDK writes', async () => {
    // The simulated machines' live values change between two reads: the answers compared here are stable ones.
    for (const body of [call(1, 'list_groups'), call('req-7', 'list_machines'), call(3, 'read_machine', { machineID: 'NOPE' }), call(4, 'list_machines', { groupID: 'missing' })]) {
      const { plain, sdk } = await both(body, { accesstoken: token });
      expect(plain).toEqual(sdk);
      expect(plain.status).toBe(200);
      expect(JSON.parse(plain.body).id).toBe(body.id);
    }
    const error = JSON.parse((await both(call(3, 'read_machine', { machineID: 'NOPE' }), { accesstoken: token })).plain.body);
    expect(error.result.isError).toBe(true);
  });

  it('GW-86 GW-87 the cloud\'s own texts (no token, unknown tool, gateway offline): the same bytes as the SDK writes', async () => {
    const noToken = await both(call(1, 'list_machines'));
    expect(noToken.plain).toEqual(noToken.sdk);
    expect(JSON.parse(noToken.plain.body).result.content[0].text).toBe(UNAUTHORIZED_TEXT);
    const unknown = await both(call(2, 'no_such_tool'), { accesstoken: token });
    expect(unknown.plain).toEqual(unknown.sdk);
    const offline = await both(call(3, 'list_machines'), { accesstoken: offlineToken });
    expect(offline.plain).toEqual(offline.sdk);
    expect(JSON.parse(offline.plain.body).result.content[0].text).toContain('GATEWAY_SERVICE_UNAVAILABLE');
  });

  it('GW-85 a gateway whose answer is not one JSON string literal cannot add JSON to the response, on either path', async () => {
    const rogue = (await cloud.tokens.create('rogue')).token;
    const link = await lightLink(cloud.brokerUrl as string, rogue, [Buffer.from('"x"}],"isError":false,"extra":{"a":"b"')]);
    try {
      await untilOnline(cloud, rogue);
      const { plain, sdk } = await both(call(9, 'list_groups'), { accesstoken: rogue });
      for (const answer of [plain, sdk]) {
        expect(answer.status).toBe(200);
        const body = JSON.parse(answer.body);
        expect(Object.keys(body).sort()).toEqual(['id', 'jsonrpc', 'result']);
        expect(body.result.isError).toBe(true);
        expect(body.result.content).toHaveLength(1);
        expect(body.result.content[0].text).toMatch(/^\/api\/config\/groups failed: the gateway's answer could not be read \(correlation id [0-9a-f]{16}\)$/);
      }
    } finally {
      await link.endAsync(true);
    }
  });

  it('GW-06 GW-85 large answers each arrive whole and under their own id, also to a client that reads them late, however often the cloud reuses its buffers', async () => {
    const big = (await cloud.tokens.create('big')).token;
    // Answers of about 300 KB, different per call id (the light link answers all calls alike, so the id is what differs).
    const text = JSON.stringify({ machines: Array.from({ length: 4000 }, (_, i) => ({ machineID: `M${i}`, name: `Fräse ${i} "${'x'.repeat(i % 7)}"` })) });
    const link = await lightLink(cloud.brokerUrl as string, big, [Buffer.from(JSON.stringify(text))]);
    try {
      await untilOnline(cloud, big);
      // Concurrent calls.
      const answers = await Promise.all(Array.from({ length: 24 }, (_, k) => post(call(`c${k}`, 'list_machines'), { 'content-type': 'application/json', accesstoken: big })));
      answers.forEach((answer, k) => {
        const body = JSON.parse(answer.body);
        expect(body.id).toBe(`c${k}`);
        expect(body.result.content[0].text).toBe(text);
      });
      // Pipelined calls on one connection that is not read for a while: the responses wait in the socket,
      // so a buffer given back before its response was written would show up as a corrupted later one.
      const { hostname, port } = new URL(url);
      const socket = connect(Number(port), hostname);
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => received.push(d));
      socket.pause();
      const count = 40;
      for (let k = 0; k < count; k++) {
        const payload = JSON.stringify(call(`p${k}`, 'list_machines'));
        socket.write(`POST /mcp HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\naccesstoken: ${big}\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
      }
      await sleep(1500);
      socket.resume();
      const bodies: string[] = [];
      for (let deadline = Date.now() + 20_000; bodies.length < count && Date.now() < deadline; await sleep(20)) {
        bodies.length = 0;
        const all = Buffer.concat(received);
        for (let at = 0; at < all.length; ) {
          const headEnd = all.indexOf('\r\n\r\n', at);
          if (headEnd < 0) break;
          const length = Number(/content-length: (\d+)/i.exec(all.toString('latin1', at, headEnd))?.[1]);
          if (headEnd + 4 + length > all.length) break;
          bodies.push(all.toString('utf8', headEnd + 4, headEnd + 4 + length));
          at = headEnd + 4 + length;
        }
      }
      socket.destroy();
      expect(bodies).toHaveLength(count);
      bodies.forEach((raw, k) => {
        const body = JSON.parse(raw);
        expect(body.id).toBe(`p${k}`);
        expect(body.result.content[0].text).toBe(text);
      });
    } finally {
      await link.endAsync(true);
    }
  });

  it('GW-06 only a plain tools/call takes the cloud\'s own path; anything unusual goes to the SDK', () => {
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const body = call(1, 'list_machines', { groupID: 'g' });
    expect(plainToolCall({ headers, body })).toEqual({ id: 1, name: 'list_machines', arguments: { groupID: 'g' } });
    expect(plainToolCall({ headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body })).toBeDefined();
    for (const [what, h, b] of [
      ['one media type accepted', { ...headers, accept: 'application/json' }, body],
      ['another content type', { ...headers, 'content-type': 'application/json; charset=utf-8' }, body],
      ['an unsupported protocol version', { ...headers, 'mcp-protocol-version': '1999-01-01' }, body],
      ['a batch', headers, [body]],
      ['another method', headers, { ...body, method: 'tools/list' }],
      ['a notification (no id)', headers, { jsonrpc: '2.0', method: 'tools/call', params: body.params }],
      ['a fractional id', headers, { ...body, id: 1.5 }],
      ['params with _meta', headers, { ...body, params: { ...body.params, _meta: { progressToken: 1 } } }],
      ['arguments that are not an object', headers, { ...body, params: { name: 'list_machines', arguments: [1] } }],
      ['an extra member', headers, { ...body, extra: true }],
      ['another JSON-RPC version', headers, { ...body, jsonrpc: '1.0' }],
    ] as const) {
      expect({ what, plain: plainToolCall({ headers: h as Record<string, string>, body: b }) }).toEqual({ what, plain: undefined });
    }
  });
});
