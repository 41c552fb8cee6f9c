/**
 * TLS for a role's listener (core/tls.ts through RoleRuntime): a pair is
 * checked before the role opens (each wrong file named), the listener
 * answers HTTPS with HSTS, and a replaced pair is served to new connections
 * after a file change or SIGHUP without a restart; a broken replacement
 * keeps the pair that was served.
 */
import { copyFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpApp } from '../../core/http-server.js';
import { createRestApp } from '../../core/rest/serve.js';
import { RoleRuntime } from '../../core/runtime.js';
import { HSTS_HEADER, loadTlsPair, TlsError } from '../../core/tls.js';
import { selfSignedCertificate, type SelfSigned } from '../fixtures/self-signed.js';

const logger = pino({ level: 'silent' });
const freshDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

/** One HTTPS GET on a new connection: status, headers and the fingerprint of the certificate the server presented. */
function get(url: string): Promise<{ status: number; hsts: string | undefined; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, agent: false }, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, hsts: res.headers['strict-transport-security'] as string | undefined, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

const fingerprintOf = (pair: SelfSigned) => new X509Certificate(pair.cert).fingerprint256;

/** Puts `from`'s pair in place of `to`'s files the way a renewal does: a new file renamed over the old. */
function replacePair(from: SelfSigned, to: SelfSigned): void {
  for (const [src, dest] of [[from.keyFile, to.keyFile], [from.certFile, to.certFile]] as const) {
    copyFileSync(src, `${dest}.new`);
    renameSync(`${dest}.new`, dest);
  }
}

async function startRole(pair: SelfSigned, build: 'gateway' | 'rest' = 'rest') {
  const runtime = await RoleRuntime.open({ role: 'example', dataDir: freshDir('tls-role-'), databaseFile: 'example.db', logger, now: Date.now, tls: pair });
  toClose.push(() => runtime.stop());
  const app = build === 'rest' ? createRestApp(logger, { ...runtime.serverOptions() }) : createHttpApp(logger, false, runtime.serverOptions());
  app.get('/hello', async () => ({ hello: 'world' }));
  await runtime.startPlugins([], {}, app);
  await app.ready();
  const url = await runtime.listen('127.0.0.1', 0);
  return { runtime, url };
}

describe('TLS pair', () => {
  it('a missing or unreadable file is refused naming its path', () => {
    const pair = selfSignedCertificate();
    const missing = join(pair.dir, 'nope.pem');
    expect(() => loadTlsPair({ certFile: missing, keyFile: pair.keyFile })).toThrow(new TlsError(`TLS certificate file ${missing}: cannot be read (no such file)`));
    expect(() => loadTlsPair({ certFile: pair.certFile, keyFile: pair.dir })).toThrow(`TLS key file ${pair.dir}: cannot be read (is a directory)`);
  });

  it('a file that is not PEM of its kind is refused naming its path', () => {
    const pair = selfSignedCertificate();
    expect(() => loadTlsPair({ certFile: pair.keyFile, keyFile: pair.keyFile })).toThrow(`TLS certificate file ${pair.keyFile}: not a PEM certificate`);
    expect(() => loadTlsPair({ certFile: pair.certFile, keyFile: pair.certFile })).toThrow(`TLS key file ${pair.certFile}: not an unencrypted PEM private key`);
  });

  it('a key that is not the certificate\'s is refused naming both paths, and the role does not open', async () => {
    const a = selfSignedCertificate();
    const b = selfSignedCertificate();
    const mismatched = { certFile: a.certFile, keyFile: b.keyFile };
    expect(() => loadTlsPair(mismatched)).toThrow(`TLS key file ${b.keyFile}: not the private key of the certificate in ${a.certFile}`);
    await expect(RoleRuntime.open({ role: 'example', dataDir: freshDir('tls-role-'), databaseFile: 'example.db', logger, now: Date.now, tls: mismatched }))
      .rejects.toThrow(`TLS key file ${b.keyFile}: not the private key of the certificate in ${a.certFile}`);
  });
});

describe('a role serving TLS', () => {
  it('answers HTTPS with Strict-Transport-Security, on the program service\'s and the gateway\'s app alike', async () => {
    const pair = selfSignedCertificate();
    for (const build of ['rest', 'gateway'] as const) {
      const { runtime, url } = await startRole(pair, build);
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(runtime.secure).toBe(true);
      const answer = await get(`${url}/hello`);
      expect(answer).toEqual({ status: 200, hsts: HSTS_HEADER, fingerprint: fingerprintOf(pair) });
      expect((await get(`${url}/no-such-route`)).hsts).toBe(HSTS_HEADER);
    }
  });

  it('serves a replaced pair after the files change, without a restart', async () => {
    const pair = selfSignedCertificate();
    const { url } = await startRole(pair);
    const next = selfSignedCertificate();
    replacePair(next, pair);
    await vi.waitFor(async () => expect((await get(`${url}/hello`)).fingerprint).toBe(fingerprintOf(next)), { timeout: 10_000, interval: 100 });
  });

  it('on SIGHUP serves the pair now in the files; a broken pair is not served and the previous one stays', async () => {
    const pair = selfSignedCertificate();
    const { url } = await startRole(pair);
    writeFileSync(pair.certFile, 'not a certificate');
    process.emit('SIGHUP', 'SIGHUP');
    expect((await get(`${url}/hello`)).fingerprint).toBe(fingerprintOf(pair));
    const next = selfSignedCertificate();
    replacePair(next, pair);
    process.emit('SIGHUP', 'SIGHUP');
    expect((await get(`${url}/hello`)).fingerprint).toBe(fingerprintOf(next));
  });

  it('a role that serves TLS refuses to listen with an app built without its https options', async () => {
    const runtime = await RoleRuntime.open({ role: 'example', dataDir: freshDir('tls-role-'), databaseFile: 'example.db', logger, now: Date.now, tls: selfSignedCertificate() });
    toClose.push(() => runtime.stop());
    const app = createRestApp(logger);
    await runtime.startPlugins([], {}, app);
    await app.ready();
    await expect(runtime.listen('127.0.0.1', 0)).rejects.toThrow('role example: serves TLS, so its app must be built with runtime.serverOptions()');
  });
});
