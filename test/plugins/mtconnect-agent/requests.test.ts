import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../plugins/mtconnect-agent/agent.js';
import { GatewayReader } from '../../../plugins/mtconnect-agent/gateway-reader.js';
import { LiveState } from '../../../plugins/mtconnect-agent/live-state.js';
import { StreamSession } from '../../../plugins/mtconnect-agent/streaming.js';
import { schemaErrors } from '../../fixtures/mtconnect/validate.js';
import { headerOf, observationsOf, parseXml, startAgent, untilMachinesReported, type TestAgent } from './agent-fixture.js';

let agent: TestAgent;

beforeAll(async () => {
  agent = await startAgent();
  await untilMachinesReported(agent);
}, 60_000);

afterAll(() => agent?.stop());

/** Reads the parts of a multipart stream as they come. */
class PartReader {
  private buffer = Buffer.alloc(0);
  private done = false;
  readonly boundary: string;

  constructor(
    readonly response: Response,
    private readonly reader = response.body!.getReader(),
  ) {
    const type = response.headers.get('content-type') ?? '';
    this.boundary = /boundary=([^;]+)/.exec(type)?.[1] ?? '';
  }

  /** The next part's headers and body; undefined when the stream ended. */
  async next(): Promise<{ headers: Record<string, string>; body: string } | undefined> {
    for (;;) {
      const part = this.take();
      if (part) return part;
      if (this.done) return undefined;
      const { value, done } = await this.reader.read();
      if (done) this.done = true;
      else this.buffer = Buffer.concat([this.buffer, Buffer.from(value)]);
    }
  }

  private take(): { headers: Record<string, string>; body: string } | undefined {
    const marker = Buffer.from(`--${this.boundary}\r\n`);
    const start = this.buffer.indexOf(marker);
    if (start < 0) return undefined;
    const headEnd = this.buffer.indexOf('\r\n\r\n', start);
    if (headEnd < 0) return undefined;
    const headers: Record<string, string> = {};
    for (const line of this.buffer.subarray(start + marker.length, headEnd).toString().split('\r\n')) {
      const at = line.indexOf(':');
      headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
    }
    const length = Number(headers['content-length']);
    const bodyStart = headEnd + 4;
    if (this.buffer.length < bodyStart + length + 2) return undefined;
    const body = this.buffer.subarray(bodyStart, bodyStart + length).toString();
    expect(this.buffer.subarray(bodyStart + length, bodyStart + length + 2).toString()).toBe('\r\n');
    this.buffer = this.buffer.subarray(bodyStart + length + 2);
    return { headers, body };
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

async function stream(path: string): Promise<PartReader> {
  const res = await fetch(agent.url + path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^multipart\/x-mixed-replace;boundary=[0-9a-f]{32}$/);
  return new PartReader(res);
}

const partCountRow = (partCount: number) => ({ machineID: 'M01', cls: 'Count', ts: Date.now(), data: { delta: 1, partCount, partsTotal: 5000 + partCount, lastCycleTime: 3, program: 'O1' } });

describe('MTConnect streaming', () => {
  it('a sample stream sends its observations as multipart/x-mixed-replace parts, an empty document as the heartbeat, and new observations as they come', async () => {
    const next = headerOf((await agent.get('/current')).body).nextSequence;
    const parts = await stream(`/sample?from=${next}&interval=0&heartbeat=200&path=${encodeURIComponent('//DataItem[@type="PART_COUNT"]')}`);
    try {
      const first = (await parts.next())!;
      expect(first.headers['content-type']).toBe('text/xml');
      expect(await schemaErrors('Streams', first.body)).toEqual([]);
      const heartbeat = (await parts.next())!;
      expect(observationsOf(heartbeat.body)).toEqual([]);
      await agent.write([partCountRow(424242)]);
      let seen: ReturnType<typeof observationsOf> = [];
      while (!seen.some((o) => o.value === '424242')) seen = observationsOf((await parts.next())!.body);
      expect(seen.every((o) => o.element === 'PartCount')).toBe(true);
    } finally {
      await parts.cancel();
    }
  });

  it('observations committed while a slow client takes a part are sent next, not passed over at the heartbeat', async () => {
    // The gateway's own agent parts, over a listener whose response reports backpressure on the first part
    // and takes it only once a part count has been committed meanwhile, as a slow client's socket would.
    const ctx = agent.tg.gateway.context;
    const reader = new GatewayReader(ctx);
    const live = await LiveState.open(reader);
    const own = new Agent(reader, live, { version: 'test', sender: 'test', instanceId: await reader.instanceId(), gatewayId: 'gw', startedAt: Date.now() });
    const from = (await own.header()).nextSequence;
    const server = http.createServer((req, res) => {
      const session = new StreamSession(own, res, 'xml', req.url ?? '', () => undefined);
      const write = res.write.bind(res) as (chunk: string) => boolean;
      let first = true;
      res.write = ((chunk: string) => {
        write(chunk);
        if (!first) return true;
        first = false;
        void agent.write([partCountRow(535353)]).then(() => res.emit('drain'));
        return false;
      }) as typeof res.write;
      session.begin();
      void session.run(() => session.sample({ from, count: 100, filter: own.filter(undefined, '//DataItem[@type="PART_COUNT"]'), interval: 0, heartbeat: 300 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const parts = new PartReader(await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/sample`));
    try {
      const seen: ReturnType<typeof observationsOf> = [];
      for (let i = 0; i < 5 && !seen.some((o) => o.value === '535353'); i++) seen.push(...observationsOf((await parts.next())!.body));
      expect(seen.map((o) => o.value)).toContain('535353');
    } finally {
      await parts.cancel();
      live.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a stream that falls behind the oldest row the history keeps gets an OUT_OF_RANGE document and ends', async () => {
    // The stream starts caught up and, once new observations arrive, waits out its interval before it reads
    // them: the rows it would read next are removed by retention meanwhile, so its next read is behind.
    const h = headerOf((await agent.get('/current')).body);
    const parts = await stream(`/sample?from=${h.nextSequence}&interval=3000&heartbeat=10000`);
    try {
      expect((await parts.next())!.headers['content-type']).toBe('text/xml');
      const db = agent.tg.gateway.context.db;
      await agent.write([partCountRow(1)]);
      const unread = (await db.get<{ last: number }>('SELECT max(seq) AS last FROM history'))!.last;
      await db.write((tx) => tx.run('DELETE FROM history WHERE seq <= ?', [unread]));
      await agent.write([partCountRow(2)]);
      let last: string | undefined;
      for (let part = await parts.next(); part; part = await parts.next()) last = part.body;
      expect(await schemaErrors('Error', last!)).toEqual([]);
      expect(Object.keys(parseXml(last!).MTConnectError.Errors)).toEqual(['OutOfRange']);
    } finally {
      await parts.cancel();
    }
  });

  it('a current stream sends /current every interval, in JSON when asked', async () => {
    const res = await fetch(`${agent.url}/M01/current?interval=50`, { headers: { accept: 'application/json' } });
    const parts = new PartReader(res);
    try {
      for (let i = 0; i < 3; i++) {
        const part = (await parts.next())!;
        expect(part.headers['content-type']).toBe('application/json');
        expect(JSON.parse(part.body).MTConnectStreams.Streams.DeviceStream[0].name).toBe('M01');
      }
    } finally {
      await parts.cancel();
    }
  });

  it('stopping the gateway ends the streams it serves', async () => {
    const other = await startAgent({ machines: [] });
    const res = await fetch(`${other.url}/sample?interval=100&heartbeat=100`);
    const parts = new PartReader(res);
    await parts.next();
    await other.stop();
    let ended = false;
    while (!ended) ended = (await parts.next()) === undefined;
    expect(ended).toBe(true);
  });
});

describe('MTConnect requests: bad input is an MTConnectError naming it', () => {
  const refusal = async (path: string, status: number, element: string, parameter?: string) => {
    const res = await agent.get(path);
    expect(res.status, path).toBe(status);
    const errors = parseXml(res.body).MTConnectError.Errors;
    expect(Object.keys(errors), path).toEqual([element]);
    if (parameter) expect(errors[element].QueryParameter['@_name'], path).toBe(parameter);
    return errors[element];
  };

  it('numbers outside what the agent serves are OUT_OF_RANGE with their bounds', async () => {
    expect((await refusal('/sample?count=0', 400, 'OutOfRange', 'count')).ErrorMessage).toBe("'count' must not be zero(0)");
    const tooMany = await refusal('/sample?count=10001', 400, 'OutOfRange', 'count');
    expect([tooMany.QueryParameter.Minimum, tooMany.QueryParameter.Maximum]).toEqual(['-10000', '10000']);
    await refusal('/sample?count=-10001', 400, 'OutOfRange', 'count');
    await refusal('/sample?interval=-1', 400, 'OutOfRange', 'interval');
    await refusal('/sample?interval=3600001', 400, 'OutOfRange', 'interval');
    await refusal('/sample?interval=1000&heartbeat=5', 400, 'OutOfRange', 'heartbeat');
    await refusal('/current?interval=0', 400, 'OutOfRange', 'interval');
    const next = headerOf((await agent.get('/current')).body).nextSequence;
    await refusal(`/sample?from=${next + 1}`, 400, 'OutOfRange', 'from');
    await refusal(`/sample?interval=1000&from=${next + 1}`, 400, 'OutOfRange', 'from');
    await refusal('/assets?count=0', 400, 'OutOfRange', 'count');
  });

  it('values of the wrong form are INVALID_PARAMETER_VALUE naming the parameter; a stream with a negative count is refused', async () => {
    await refusal('/sample?from=abc', 400, 'InvalidParameterValue', 'from');
    await refusal('/sample?from=-5', 400, 'InvalidParameterValue', 'from');
    await refusal('/sample?from=123456789012345678901234', 400, 'InvalidParameterValue', 'from');
    await refusal('/sample?from=1&from=2', 400, 'InvalidParameterValue', 'from');
    await refusal('/current?at=1e5', 400, 'InvalidParameterValue', 'at');
    await refusal('/probe?format=yaml', 400, 'InvalidParameterValue', 'format');
    await refusal('/probe?deviceType=Robot', 400, 'InvalidParameterValue', 'deviceType');
    await refusal('/current?pretty=maybe', 400, 'InvalidParameterValue', 'pretty');
    await refusal('/sample?interval=1000&count=-5', 400, 'InvalidRequest');
  });

  it('paths that do not parse, are too long or select nothing are INVALID_XPATH; unknown devices NO_DEVICE; other URLs INVALID_URI', async () => {
    for (const path of ['DataItem', '//DataItem[@type=EXECUTION]', '//DataItem[@color="red"]', '//Device]', `//DataItem[@type="${'A'.repeat(2000)}"]`, Array(20).fill('//Path').join('|')]) {
      await refusal(`/current?path=${encodeURIComponent(path)}`, 400, 'InvalidXPath');
    }
    await refusal('/M01/current?path=' + encodeURIComponent('//Device[@name="M02"]'), 400, 'InvalidXPath');
    await refusal('/NOPE/probe', 404, 'NoDevice');
    await refusal(`/${'x'.repeat(300)}/current`, 404, 'InvalidURI');
    await refusal('/current/extra/parts', 404, 'InvalidURI');
  });

  it('no input gives a 5xx: hostile query strings and methods are refused', async () => {
    const paths = ['/sample?from=%00', '/current?path=%FF%FE', '/sample?count=%F0%9F%92%A9', '/%E2%80%AE/current', '/asset/%00', '/sample?path=' + encodeURIComponent("//*[@id='" + "'".repeat(50) + "']")];
    for (const path of paths) {
      const res = await agent.get(path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
    for (const method of ['POST', 'DELETE', 'PATCH']) {
      const res = await fetch(`${agent.url}/sample`, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
    expect((await fetch(`${agent.url}/probe`, { method: 'HEAD' })).status).toBe(200);
    // HEAD of a stream is one document's head, not a stream that never ends.
    const head = await fetch(`${agent.url}/sample?interval=1000`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/xml']);
  });
});
