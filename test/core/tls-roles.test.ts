/**
 * Every role serves HTTPS when TLS_CERT_FILE and TLS_KEY_FILE name a pair
 * (or its own config section does): the gateway (its console's login, its
 * /mcp for the MCP SDK's client), the program service (its login sets a
 * `__Host-` Secure cookie that then signs in) and the cloud relay (its /mcp
 * relaying to a gateway linked to it). The client trusts the self-signed
 * certificate by its own `ca`, nothing is trusted process-wide. A pair that
 * cannot be served stops the role's start, naming the file.
 */
import { mkdtempSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HSTS_HEADER } from '../../core/http/tls.js';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { programsRole } from '../../core/roles/programs/definition.js';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { DRIVERS } from '../../drivers/registry.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { simMachine, TEST_ADMIN_PASSWORD, TEST_PLUGINS } from '../fixtures/gateway.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { startTestProgramService, TEST_PASSWORD_COST } from '../fixtures/programs.js';
import { TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';
import { selfSignedCertificate, type SelfSigned } from '../fixtures/self-signed.js';

const logger = pino({ level: 'silent' });

/** `fetch` over node:https trusting `ca` only for its own requests (the MCP SDK's transport takes it as `fetch`). */
function fetchTrusting(ca: Buffer): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const req = httpsRequest(new URL(url), { method: init.method ?? 'GET', headers, ca, agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) answerHeaders.append(name, v);
      const status = res.statusCode ?? 0;
      const empty = [101, 204, 205, 304].includes(status);
      if (empty) res.resume();
      resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: answerHeaders }));
    });
    req.on('error', reject);
    req.end(typeof init.body === 'string' ? init.body : undefined);
  });
}

/** The tool names the MCP SDK's client lists at `url` (`/mcp` of a role), over HTTPS trusting `ca`. */
async function listToolsOver(url: string, ca: Buffer, headers: Record<string, string>): Promise<string[]> {
  const client = new Client({ name: 'tls-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: fetchTrusting(ca) }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

const tlsEnv = (pair: SelfSigned) => ({ TLS_CERT_FILE: pair.certFile, TLS_KEY_FILE: pair.keyFile });
const freshDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

async function startGateway(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<Gateway> {
  const config = parseConfig({ logLevel: 'silent', dataDir: freshDir('tls-gw-'), timeZone: 'UTC', ...raw });
  return Gateway.create({ config, drivers: DRIVERS, plugins: TEST_PLUGINS, logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, ...env } });
}

const programsPlugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p));

describe('every role over TLS with TLS_CERT_FILE and TLS_KEY_FILE', { timeout: 60_000 }, () => {
  const pair = selfSignedCertificate();
  const https = fetchTrusting(pair.cert);
  const toStop: (() => Promise<unknown>)[] = [];
  let cloudUrl: string;
  let gatewayUrl: string;
  let gatewayToken: string;
  let cloudToken: string;

  beforeAll(async () => {
    const cloud = await startTestCloud({ env: tlsEnv(pair) });
    toStop.push(() => cloud.stop());
    cloudUrl = await cloud.listen('127.0.0.1', 0);
    const created = await cloud.tokens.create('plant-tls');
    cloudToken = created.token;
    const gateway = await startGateway({ machines: [simMachine('T1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: cloudToken } }, tlsEnv(pair));
    toStop.unshift(() => gateway.stop());
    gatewayUrl = await gateway.listen({ host: '127.0.0.1', port: 0 });
    await untilOnline(cloud, created.record.id);
  }, 60_000);
  afterAll(async () => {
    for (const stop of toStop) await stop().catch(() => undefined);
  });

  it('the gateway answers HTTPS with HSTS, its console logs in, and the MCP SDK client lists its tools on /mcp', async () => {
    expect(gatewayUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const login = await https(`${gatewayUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: TEST_ADMIN_PASSWORD }) });
    expect(login.status).toBe(200);
    expect(login.headers.get('strict-transport-security')).toBe(HSTS_HEADER);
    gatewayToken = ((await login.json()) as { data: { token: string } }).data.token;
    expect(gatewayToken).toMatch(/\S{20,}/);
    const tools = await listToolsOver(`${gatewayUrl}/mcp`, pair.cert, { authorization: `Bearer ${gatewayToken}` });
    expect(tools).toContain('list_machines');
  });

  it('the cloud relay answers HTTPS and the MCP SDK client lists the tools through its /mcp', async () => {
    expect(cloudUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await https(`${cloudUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('strict-transport-security')).toBe(HSTS_HEADER);
    const tools = await listToolsOver(`${cloudUrl}/mcp`, pair.cert, { accesstoken: cloudToken });
    expect(tools).toContain('list_machines');
  });

  it('a client that does not trust the certificate is refused by its own TLS check (nothing is trusted process-wide)', async () => {
    await expect(fetch(`${cloudUrl}/healthz`)).rejects.toThrow();
  });
});

describe('the program service over TLS', { timeout: 60_000 }, () => {
  it('answers HTTPS; its login sets a __Host- cookie with Secure, which then signs in', async () => {
    const pair = selfSignedCertificate();
    const https = fetchTrusting(pair.cert);
    const svc = await startTestProgramService({ plugins: programsPlugins, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD, ...tlsEnv(pair) } });
    try {
      expect(svc.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(svc.role.context.secure).toBe(true);
      const login = await https(`${svc.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: TEST_PROGRAMS_ADMIN_PASSWORD }) });
      expect(login.status).toBe(200);
      expect(login.headers.get('strict-transport-security')).toBe(HSTS_HEADER);
      const setCookie = login.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(/^__Host-[\w-]+=/);
      expect(setCookie.split(/;\s*/).map((a) => a.toLowerCase())).toEqual(expect.arrayContaining(['secure', 'httponly', 'path=/']));
      const me = await https(`${svc.url}/api/v1/auth/me`, { headers: { cookie: setCookie.split(';')[0] as string } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ kind: 'user', name: 'admin', authMethod: 'session' });
    } finally {
      await svc.stop();
    }
  });

  it('started as a role with programs.tls, it serves HTTPS and its banner shows the https URLs', async () => {
    const pair = selfSignedCertificate();
    const config = parseConfig({ logLevel: 'silent', dataDir: freshDir('tls-programs-'), timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0, tls: { certFile: pair.certFile, keyFile: pair.keyFile } } });
    const started = await programsRole.start({ config, file: 'plant.json', logger, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, offers: {}, definitions: [] });
    try {
      const docs = started.banner.find((line) => line.includes('/api/docs')) ?? '';
      const url = /(https:\/\/127\.0\.0\.1:\d+)\/api\/docs/.exec(docs)?.[1];
      expect(url, docs).toBeDefined();
      expect(started.banner.filter((line) => /https?:\/\//.test(line)).every((line) => line.includes('https://127.0.0.1:'))).toBe(true);
      expect((await fetchTrusting(pair.cert)(`${url}/healthz`)).status).toBe(200);
    } finally {
      await started.stop.stop();
    }
  });
});

describe("the configuration's tls section reaches every role's listener", { timeout: 60_000 }, () => {
  /** Whether a client that speaks at most TLS 1.2 gets a connection to `url`. */
  const tls12Connects = (url: string) => new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false, maxVersion: 'TLSv1.2' }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

  it('with tls.minVersion TLSv1.3 the gateway, the program service and the cloud refuse a TLS 1.2 client and serve TLS 1.3', async () => {
    const pair = selfSignedCertificate();
    const raw = { logLevel: 'silent', timeZone: 'UTC', tls: { minVersion: 'TLSv1.3' }, programs: { host: '127.0.0.1', port: 0 } };
    const gateway = await startGateway({ tls: { minVersion: 'TLSv1.3' } }, tlsEnv(pair));
    const programsConfig = parseConfig({ ...raw, dataDir: freshDir('tls-policy-') });
    const programs = await programsRole.start({ config: programsConfig, file: 'plant.json', logger, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD, ...tlsEnv(pair) }, offers: {}, definitions: [] });
    const cloud = await startTestCloud({ env: tlsEnv(pair), config: parseConfig({ ...raw, dataDir: freshDir('tls-policy-cloud-') }) });
    try {
      const urls = [await gateway.listen({ host: '127.0.0.1', port: 0 }), (programs.consoleUrl ?? '').replace(/\/$/, ''), await cloud.listen('127.0.0.1', 0)];
      for (const url of urls) {
        expect(await tls12Connects(url), url).toBe(false);
        expect((await fetchTrusting(pair.cert)(`${url}/healthz`)).status, url).toBe(200);
      }
    } finally {
      await cloud.stop();
      await programs.stop.stop();
      await gateway.stop();
    }
  });
});

describe('a pair that cannot be served stops the start, naming the file', () => {
  const good = selfSignedCertificate();
  const other = selfSignedCertificate();
  const mismatched = { TLS_CERT_FILE: good.certFile, TLS_KEY_FILE: other.keyFile };
  const mismatchText = `TLS key file ${other.keyFile}: not the private key of the certificate in ${good.certFile}`;

  it('the gateway, from communication.tls (its own section) over the environment', async () => {
    const missing = join(good.dir, 'no-such-cert.pem');
    await expect(startGateway({ communication: { tls: { certFile: missing, keyFile: good.keyFile } } }, tlsEnv(good)))
      .rejects.toThrow(`TLS certificate file ${missing}: cannot be read (no such file)`);
  });

  it('the program service, started as a role with programs.tls', async () => {
    const config = parseConfig({ logLevel: 'silent', dataDir: freshDir('tls-programs-'), timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0, tls: { certFile: good.certFile, keyFile: other.keyFile } } });
    await expect(programsRole.start({ config, file: 'plant.json', logger, env: {}, offers: {}, definitions: [] }))
      .rejects.toThrow(`program service failed to start (config plant.json):\n${mismatchText}`);
  });

  it('the cloud relay, from TLS_CERT_FILE/TLS_KEY_FILE; one variable without the other is refused naming both', async () => {
    await expect(startTestCloud({ env: mismatched })).rejects.toThrow(mismatchText);
    await expect(startTestCloud({ env: { TLS_CERT_FILE: good.certFile } })).rejects.toThrow('TLS: TLS_CERT_FILE is set but TLS_KEY_FILE is not; set both (a PEM certificate and its key) or neither');
  });
});
