/**
 * TLS for a role's listener (core/http/tls.ts through RoleRuntime): a pair is
 * checked before the role opens (each wrong file named), the listener
 * answers HTTPS with HSTS, and a replaced pair is served to new connections
 * after a file change or SIGHUP without a restart; a broken replacement
 * keeps the pair that was served.
 */
import { copyFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpApp } from '../../core/http/http-server.js';
import { createRestApp } from '../../core/rest/serve.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { execFileSync } from 'node:child_process';
import { DEFAULT_TLS_POLICY, HSTS_HEADER, loadTlsPair, MODERN_TLS12_CIPHERS, TlsError, type TlsPolicy } from '../../core/http/tls.js';
import { ConfigError } from '../../core/config/config.js';
import { parseConfig } from '../../core/roles/index.js';
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

/** A TLS handshake with `url`'s listener as a client with `options` would make it: the protocol and suite agreed, or the error's code. */
function handshake(url: string, options: ConnectionOptions): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false, ...options }, () => {
      resolve(`${socket.getProtocol()} ${socket.getCipher().name}`);
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`refused ${err.code ?? err.message}`));
  });
}

/** A self-signed RSA pair (the fixture's is EC), for the suites with RSA key exchange. */
function selfSignedRsa(): SelfSigned {
  const dir = freshDir('tls-rsa-');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-keyout', keyFile, '-out', certFile, '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  return { dir, certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

/** Puts `from`'s pair in place of `to`'s files the way a renewal does: a new file renamed over the old. */
function replacePair(from: SelfSigned, to: SelfSigned): void {
  for (const [src, dest] of [[from.keyFile, to.keyFile], [from.certFile, to.certFile]] as const) {
    copyFileSync(src, `${dest}.new`);
    renameSync(`${dest}.new`, dest);
  }
}

async function startRole(pair: SelfSigned, build: 'gateway' | 'rest' = 'rest', tlsPolicy?: TlsPolicy) {
  const runtime = await RoleRuntime.open({ role: 'example', dataDir: freshDir('tls-role-'), databaseFile: 'example.db', logger, now: Date.now, tls: pair, ...(tlsPolicy ? { tlsPolicy } : {}) });
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

  it('offers TLS 1.2 with forward-secret AEAD suites only, and TLS 1.3: CBC and SHA-1 suites, RSA key exchange and TLS 1.1 are refused', async () => {
    const { url } = await startRole(selfSignedCertificate());
    expect(await handshake(url, {})).toMatch(/^TLSv1\.3 TLS_/);
    expect(await handshake(url, { maxVersion: 'TLSv1.2' })).toMatch(/^TLSv1\.2 ECDHE-ECDSA-(AES128-GCM-SHA256|AES256-GCM-SHA384|CHACHA20-POLY1305)$/);
    for (const ciphers of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-ECDSA-AES256-SHA384']) {
      expect(await handshake(url, { maxVersion: 'TLSv1.2', ciphers }), ciphers).toMatch(/^refused /);
    }
    expect(await handshake(url, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })).toMatch(/^refused /);
    const rsa = await startRole(selfSignedRsa());
    expect(await handshake(rsa.url, { maxVersion: 'TLSv1.2' })).toMatch(/^TLSv1\.2 ECDHE-RSA-/);
    for (const ciphers of ['AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA', 'ECDHE-RSA-AES128-SHA']) {
      expect(await handshake(rsa.url, { maxVersion: 'TLSv1.2', ciphers }), ciphers).toMatch(/^refused /);
    }
  });

  it('with tls.minVersion TLSv1.3 a TLS 1.2 client is refused, also after the certificate is reloaded; a suite list of its own is offered as given', async () => {
    const pair = selfSignedCertificate();
    const { url } = await startRole(pair, 'rest', { minVersion: 'TLSv1.3', ciphers: MODERN_TLS12_CIPHERS });
    expect(await handshake(url, { maxVersion: 'TLSv1.2' })).toMatch(/^refused /);
    expect(await handshake(url, {})).toMatch(/^TLSv1\.3 /);
    const next = selfSignedCertificate();
    replacePair(next, pair);
    process.emit('SIGHUP', 'SIGHUP');
    expect((await get(`${url}/hello`)).fingerprint).toBe(fingerprintOf(next));
    expect(await handshake(url, { maxVersion: 'TLSv1.2' })).toMatch(/^refused /);

    const own = await startRole(selfSignedCertificate(), 'rest', { minVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' });
    expect(await handshake(own.url, { maxVersion: 'TLSv1.2' })).toBe('TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384');
  });

  it('the tls section: the modern default, the accepted versions, and a suite list OpenSSL does not know refused naming tls.ciphers', () => {
    expect(parseConfig({}).tls).toEqual(DEFAULT_TLS_POLICY);
    expect(DEFAULT_TLS_POLICY).toEqual({ minVersion: 'TLSv1.2', ciphers: MODERN_TLS12_CIPHERS });
    expect(parseConfig({ tls: { minVersion: 'TLSv1.3' } }).tls).toEqual({ minVersion: 'TLSv1.3', ciphers: MODERN_TLS12_CIPHERS });
    expect(() => parseConfig({ tls: { ciphers: 'NO-SUCH-SUITE' } })).toThrow(ConfigError);
    expect(() => parseConfig({ tls: { ciphers: 'NO-SUCH-SUITE' } })).toThrow(/tls\.ciphers: .*not an OpenSSL cipher list/);
    expect(() => parseConfig({ tls: { minVersion: 'TLSv1.1' } })).toThrow('tls.minVersion: found "TLSv1.1"; expected one of "TLSv1.2"|"TLSv1.3"');
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
