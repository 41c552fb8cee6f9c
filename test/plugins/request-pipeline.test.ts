/**
 * The HTTP request pipeline, over every POST interface of the registry and
 * /mcp: the caller is authenticated before the body is read, bodies are read
 * up to the interface's limit, nesting depth is refused before parsing, and
 * GET / leads to the API reference.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMIT, type InterfaceDefinition } from '../../core/interfaces/registry.js';
import { MAX_JSON_DEPTH } from '../../core/http/json-depth.js';
import { MCP_BODY_LIMIT, MCP_PATH } from '../../plugins/mcp/index.js';
import { PROGRAM_UPLOAD_BODY_LIMIT } from '../../plugins/gateway-api/program-files.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

let gw: TestGateway;
let base: { host: string; port: number };
beforeAll(async () => {
  gw = await startTestGateway({ machines: [simMachine('M1')] });
  const url = new URL(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }));
  base = { host: url.hostname, port: Number(url.port) };
});
afterAll(async () => {
  await gw?.stop();
});

const postInterfaces = (): InterfaceDefinition[] => gw.gateway.context.interfaces.list().filter((d) => d.method === 'POST');
const limitOf = (def: InterfaceDefinition): number => def.bodyLimit ?? DEFAULT_BODY_LIMIT;
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/**
 * Sends headers announcing `declaredBytes` and only the first chunk of the
 * body, then waits for an answer. Resolves with the status line if the server
 * answers while most of the body is still unsent; null after `waitMs` without one.
 */
function answerBeforeBody(path: string, declaredBytes: number, headers: Record<string, string> = {}, waitMs = 3000): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(base.port, base.host);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, waitMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const line = received.split('\r\n')[0];
      if (line && received.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(line);
      }
    });
    socket.on('connect', () => {
      const head = [`POST ${path} HTTP/1.1`, `host: ${base.host}:${base.port}`, 'content-type: application/json', `content-length: ${declaredBytes}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      socket.write(`[${'['.repeat(1023)}`);
    });
  });
}

describe('request pipeline', () => {
  it('an anonymous 8 MB POST to any credentialed interface or /mcp is refused with 401 before its body is read', async () => {
    const paths = [...postInterfaces().filter((d) => d.permission !== null).map((d) => d.path), MCP_PATH];
    expect(paths.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const path of paths) {
      const status = await answerBeforeBody(path, 8 * 1024 * 1024, path === MCP_PATH ? MCP_HEADERS : {});
      if (!status?.includes(' 401 ')) failures.push(`${path}: ${status ?? 'no answer while the body was unsent'}`);
    }
    expect(failures).toEqual([]);
  });

  it('a body announced larger than the interface limit is refused with 413 before it is read, public interfaces included', async () => {
    const failures: string[] = [];
    for (const def of postInterfaces()) {
      const status = await answerBeforeBody(def.path, limitOf(def) + 1, { authorization: `Bearer ${gw.adminToken}` });
      if (!status?.includes(' 413 ')) failures.push(`${def.path}: ${status ?? 'no answer while the body was unsent'}`);
    }
    const mcp = await answerBeforeBody(MCP_PATH, MCP_BODY_LIMIT + 1, { ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` });
    if (!mcp?.includes(' 413 ')) failures.push(`${MCP_PATH}: ${mcp ?? 'no answer'}`);
    expect(failures).toEqual([]);
  });

  it('a chunked body without a length is refused with 413 as soon as it passes the limit, not after it is buffered whole', async () => {
    const status = await new Promise<string | null>((resolve, reject) => {
      const socket = connect(base.port, base.host);
      let received = '';
      let sent = 0;
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(null);
      }, 5000);
      socket.on('error', reject);
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
        if (received.includes('\r\n')) {
          clearTimeout(timer);
          socket.destroy();
          resolve(received.split('\r\n')[0] ?? null);
        }
      });
      socket.on('connect', () => {
        socket.write(['POST /api/config/machine/add HTTP/1.1', `host: ${base.host}`, 'content-type: application/json', 'transfer-encoding: chunked', `authorization: Bearer ${gw.adminToken}`, '', ''].join('\r\n'));
        // Chunks of 16 KiB, one at a time, up to 8 MiB; the answer must come long before the last.
        const chunk = `4000\r\n${'['.repeat(16384)}\r\n`;
        const pump = () => {
          while (sent < 8 * 1024 * 1024 && !socket.destroyed) {
            sent += 16384;
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
        };
        pump();
      });
    });
    expect(status).toContain(' 413 ');
  });

  it('every POST interface reads up to its body limit and refuses one byte more with 413, errorCode 15, naming the limit', async () => {
    const failures: string[] = [];
    for (const def of postInterfaces()) {
      const limit = limitOf(def);
      // A JSON object padded to exactly `bytes`: {"pad":"xxx…"}.
      const padded = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;
      const at = await gw.gateway.http.inject({ method: 'POST', url: def.path, headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` }, payload: padded(limit) });
      if (at.statusCode === 413) failures.push(`${def.path}: a body of exactly ${limit} bytes was refused`);
      const over = await gw.gateway.http.inject({ method: 'POST', url: def.path, headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` }, payload: padded(limit + 1) });
      const body = over.json<{ errorCode: number; errorMsg: string }>();
      if (over.statusCode !== 413 || body.errorCode !== 15 || !body.errorMsg.includes(String(limit))) failures.push(`${def.path}: ${over.statusCode} ${over.body.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('interfaces get small body limits except program upload, which takes a 4 MiB program as base64', () => {
    const upload = gw.gateway.context.interfaces.get('/api/file/program/upload');
    expect(upload?.bodyLimit).toBe(PROGRAM_UPLOAD_BODY_LIMIT);
    expect(PROGRAM_UPLOAD_BODY_LIMIT).toBeGreaterThan(Math.ceil((4 * 1024 * 1024 * 4) / 3));
    const others = postInterfaces().filter((d) => d.path !== '/api/file/program/upload');
    expect(others.map((d) => [d.path, limitOf(d)]).filter(([, l]) => (l as number) > DEFAULT_BODY_LIMIT)).toEqual([]);
    expect(DEFAULT_BODY_LIMIT).toBeLessThanOrEqual(64 * 1024);
  });

  it(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused with 400 naming the limit on every POST interface; ${MAX_JSON_DEPTH} levels are parsed`, async () => {
    const failures: string[] = [];
    const nested = (depth: number) => `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    for (const def of postInterfaces()) {
      for (const payload of [nested(MAX_JSON_DEPTH + 1), nested(3000), `{"x":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`]) {
        const res = await gw.gateway.http.inject({ method: 'POST', url: def.path, headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` }, payload });
        const body = res.json<{ errorCode: number; errorMsg: string }>();
        if (res.statusCode !== 400 || body.errorCode !== 2 || !body.errorMsg.includes(`deeper than ${MAX_JSON_DEPTH}`)) failures.push(`${def.path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      const ok = await gw.gateway.http.inject({ method: 'POST', url: def.path, headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` }, payload: nested(MAX_JSON_DEPTH) });
      if (ok.body.includes('deeper than')) failures.push(`${def.path}: ${MAX_JSON_DEPTH} levels were refused`);
    }
    expect(failures).toEqual([]);
  });

  it('/mcp answers an unparsable, too deep or too large body with a JSON-RPC error (-32700 parse error, 413/-32000 too large)', async () => {
    const post = (payload: string) =>
      gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { 'content-type': 'application/json', ...MCP_HEADERS, authorization: `Bearer ${gw.adminToken}` }, payload });
    for (const payload of ['{bad', '', `${'['.repeat(5000)}${']'.repeat(5000)}`, '{"__proto__":{"x":1}}']) {
      const res = await post(payload);
      expect(res.statusCode, payload.slice(0, 20)).toBe(400);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700, message: expect.stringMatching(/^Parse error/) }, id: null });
    }
    const large = await post(`{"pad":"${'x'.repeat(MCP_BODY_LIMIT)}"}`);
    expect(large.statusCode).toBe(413);
    expect(large.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining(String(MCP_BODY_LIMIT)) }, id: null });
    const anonymous = await gw.gateway.http.inject({ method: 'POST', url: MCP_PATH, headers: { 'content-type': 'application/json', ...MCP_HEADERS }, payload: '{bad' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('GET / serves the fleet console, its assets from the build, with a strict CSP; a path outside the build is 404', async () => {
    const res = await gw.gateway.http.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(res.body)?.[1] as string;
    expect(script).toBeTruthy();
    const js = await gw.gateway.http.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'gzip' } });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toContain('immutable');
    const plain = await gw.gateway.http.inject({ method: 'GET', url: script });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toContain('/api/task/batchReadTaskData');
    for (const bad of ['/assets/..%2F..%2Fpackage.json', '/assets/manifest.json', '/assets/nope.js']) expect((await gw.gateway.http.inject({ method: 'GET', url: bad })).statusCode, bad).toBe(404);
    const docs = await gw.gateway.http.inject({ method: 'GET', url: '/api/docs' });
    expect(docs.statusCode).toBeLessThan(400);
  });
});
