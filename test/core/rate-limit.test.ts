/**
 * Request rate limits (core/http/rate-limit.ts through RoleRuntime): per source
 * address and per principal, per family; over a limit a 429 with
 * Retry-After in the surface's own format, the body unread; a flooding
 * client is refused while another's requests still answer.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../core/http/http-server.js';
import { createRestApp, refuseRateLimitedProblem } from '../../core/rest/serve.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { DEFAULT_RATE_LIMITS, rateLimitSettingsSchema, type RateLimitSettings } from '../../core/http/rate-limit.js';

const logger = pino({ level: 'silent' });
const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

const settings = (families: Partial<RateLimitSettings['families']>): RateLimitSettings => ({ ...DEFAULT_RATE_LIMITS, families: { ...DEFAULT_RATE_LIMITS.families, ...families } });

async function startRole(surface: 'gateway' | 'rest', rateLimits: RateLimitSettings): Promise<{ app: FastifyInstance; runtime: RoleRuntime }> {
  const runtime = await RoleRuntime.open({
    role: 'example', dataDir: mkdtempSync(join(tmpdir(), 'limits-')), databaseFile: 'example.db', logger, now: Date.now, metricsToken: 'metrics-token-for-limits', rateLimits,
    ...(surface === 'rest' ? { refuse: refuseRateLimitedProblem } : {}),
  });
  toClose.push(() => runtime.stop());
  const app = surface === 'rest' ? createRestApp(logger) : createHttpApp(logger);
  app.get('/things', async () => ({ ok: true }));
  app.post('/things', async () => ({ ok: true }));
  app.post('/api/auth/login', async () => ({ ok: true }));
  app.post('/uploads', { bodyLimit: 8 * 1024 * 1024 }, async () => ({ ok: true }));
  await runtime.startPlugins([], {}, app);
  await app.ready();
  return { app, runtime };
}

const from = (remoteAddress: string, extra: { token?: string; method?: 'GET' | 'POST'; url?: string; body?: object } = {}) => ({
  method: extra.method ?? 'GET' as const,
  url: extra.url ?? '/things',
  remoteAddress,
  ...(extra.body ? { payload: extra.body } : {}),
  headers: extra.token ? { authorization: `Bearer ${extra.token}` } : {},
});

describe('rate limits', () => {
  it('per source address: over the limit is 429 TOO_MANY_REQUESTS with Retry-After in the gateway format; another address still answers', async () => {
    const { app } = await startRole('gateway', settings({ reads: { perPrincipal: 1000, perAddress: 5 } }));
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push((await app.inject(from('10.0.0.1'))).statusCode);
      expect((await app.inject(from('10.0.0.2'))).statusCode).toBe(i < 5 ? 200 : 429);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = await app.inject(from('10.0.0.1'));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.json()).toEqual({
      errorCode: 8,
      errorMsg: `Too many requests. more than 5 reads requests in 60 s from this source address; retry after ${refused.headers['retry-after']} s`,
      hint: 'Wait for the Retry-After interval, then try again.',
    });
    expect((await app.inject(from('10.0.0.3'))).statusCode).toBe(200);
  });

  it('per principal: one caller over its limit gets the 429 problem; another caller from the same address still answers', async () => {
    const { app } = await startRole('rest', settings({ reads: { perPrincipal: 3, perAddress: 100 } }));
    const flooding = [];
    for (let i = 0; i < 6; i++) flooding.push((await app.inject(from('10.0.0.1', { token: 'caller-one' }))).statusCode);
    expect(flooding).toEqual([200, 200, 200, 429, 429, 429]);
    for (let i = 0; i < 3; i++) expect((await app.inject(from('10.0.0.1', { token: 'caller-two' }))).statusCode).toBe(200);
    const refused = await app.inject(from('10.0.0.1', { token: 'caller-one' }));
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json()).toMatchObject({ type: 'https://cnc-gateway.dev/problems/too-many-requests', status: 429, detail: expect.stringMatching(/^more than 3 reads requests in 60 s from this caller; retry after \d+ s$/) });
  });

  it('a session cookie is a caller too: one session over its limit, another session still answers', async () => {
    const { app } = await startRole('rest', settings({ reads: { perPrincipal: 2, perAddress: 100 } }));
    const withCookie = (value: string) => ({ ...from('10.0.0.1'), headers: { cookie: `theme=dark; __Host-pvs_session=${value}` } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.inject(withCookie('one.secret'))).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await app.inject(withCookie('two.secret'))).statusCode).toBe(200);
  });

  it('each family counts apart: reads used up leave writes, login and uploads; probes are never limited', async () => {
    const { app } = await startRole('gateway', settings({ reads: { perPrincipal: 2, perAddress: 2 }, login: { perPrincipal: 1, perAddress: 1 }, uploads: { perPrincipal: 1, perAddress: 1 } }));
    for (let i = 0; i < 3; i++) await app.inject(from('10.0.0.1'));
    expect((await app.inject(from('10.0.0.1'))).statusCode).toBe(429);
    expect((await app.inject(from('10.0.0.1', { method: 'POST', body: {} }))).statusCode).toBe(200);
    expect((await app.inject(from('10.0.0.1', { method: 'POST', url: '/api/auth/login', body: {} }))).statusCode).toBe(200);
    expect((await app.inject(from('10.0.0.1', { method: 'POST', url: '/api/auth/login', body: {} }))).statusCode).toBe(429);
    expect((await app.inject(from('10.0.0.1', { method: 'POST', url: '/uploads', body: {} }))).statusCode).toBe(200);
    const secondUpload = await app.inject(from('10.0.0.1', { method: 'POST', url: '/uploads', body: { big: 'x'.repeat(1000) } }));
    expect(secondUpload.statusCode).toBe(429);
    // A refused body the route would have read is read and thrown away, so the client reads its 429 on a connection that stays open.
    expect(secondUpload.headers.connection).not.toBe('close');
    for (let i = 0; i < 5; i++) {
      expect((await app.inject(from('10.0.0.1', { url: '/healthz' }))).statusCode).toBe(200);
      expect((await app.inject(from('10.0.0.1', { url: '/readyz' }))).statusCode).not.toBe(429);
    }
  });

  it('one client flooding is refused while another\'s requests, sent at the same time, all answer; the refusals are counted', async () => {
    const { app } = await startRole('gateway', settings({ reads: { perPrincipal: 3000, perAddress: 50 } }));
    const flood = Array.from({ length: 400 }, () => app.inject(from('10.0.0.66')));
    const other = Array.from({ length: 40 }, () => app.inject(from('10.0.0.7')));
    const [floodAnswers, otherAnswers] = await Promise.all([Promise.all(flood), Promise.all(other)]);
    expect(otherAnswers.map((a) => a.statusCode)).toEqual(Array(40).fill(200));
    expect(floodAnswers.filter((a) => a.statusCode === 200)).toHaveLength(50);
    expect(floodAnswers.filter((a) => a.statusCode === 429)).toHaveLength(350);
    const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-for-limits' }, remoteAddress: '10.9.9.9' });
    expect(metrics.body).toContain('http_rate_limited_total{family="reads",per="address"} 350');
  });

  it('no limits unless the runtime is given settings; settings are checked field by field', async () => {
    const runtime = await RoleRuntime.open({ role: 'example', dataDir: mkdtempSync(join(tmpdir(), 'limits-')), databaseFile: 'example.db', logger, now: Date.now });
    toClose.push(() => runtime.stop());
    const app = createHttpApp(logger);
    app.get('/things', async () => ({ ok: true }));
    await runtime.startPlugins([], {}, app);
    await app.ready();
    for (let i = 0; i < 3100; i++) if ((await app.inject(from('10.0.0.1'))).statusCode !== 200) throw new Error(`request ${i} refused`);
    const bad = rateLimitSettingsSchema.safeParse({ families: { reads: { perAddress: 0, perPrincipal: 10 } } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['families', 'reads', 'perAddress']);
    expect(DEFAULT_RATE_LIMITS.families.reads).toEqual({ perPrincipal: 3000, perAddress: 3000 });
  });
});
