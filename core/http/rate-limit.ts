/**
 * Request rate limits of a role (after OWASP's guidance: limit per caller
 * and per source, answer 429 with Retry-After), counted by
 * @fastify/rate-limit's in-memory store (an LRU per limit, so memory stays
 * bounded whatever the number of clients). Each request falls in one family
 * (`familyOf`) and is counted twice:
 *
 * - per source address (the address fastify reports, so behind a trusted
 *   proxy the client's; IPv6 by /56 as the library does), before the
 *   request is authenticated or its body read;
 * - per principal once the surface authenticated it (the gateway's user,
 *   the program service's user or service token), else per credential
 *   presented (a hash of Authorization, accessToken or the session cookie),
 *   before the body is read.
 *
 * Over either limit the request is answered 429 with Retry-After by the
 * surface's `refuse` (each surface its own error format; an `/mcp` request
 * as JSON-RPC, `refuseRateLimitedJsonRpc`), before its body is parsed: a
 * body of declared length within the route's limit is read and thrown away
 * after the answer, so the client reads its 429 instead of a reset
 * (`drainsRefusedBody`). Probes (/healthz, /readyz) are not limited. Limits are per
 * window (60 s by default) and per role; docs/operations.md, "Rate limits".
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type {} from './request-callers.js';
import { HEALTH_PATH, READY_PATH } from '../runtime/health.js';
import { drainsRefusedBody } from './refused-body.js';
import type { RoleMetrics } from '../telemetry/metrics.js';

export const RATE_FAMILIES = ['login', 'reads', 'writes', 'mcp', 'uploads', 'admin'] as const;
export type RateFamily = (typeof RATE_FAMILIES)[number];

/** A route whose body limit is at least this takes uploads. */
export const UPLOAD_BODY_THRESHOLD = 1024 * 1024;


/**
 * Requests per window. Reads allow a console and a dashboard polling several
 * endpoints every second (3,000 a minute is 50 a second); everything else is
 * lower, and no family lets one client send more than 3,000 a minute.
 */
export const DEFAULT_RATE_FAMILIES: Readonly<Record<RateFamily, { perPrincipal: number; perAddress: number }>> = {
  login: { perPrincipal: 30, perAddress: 30 },
  reads: { perPrincipal: 3000, perAddress: 3000 },
  writes: { perPrincipal: 600, perAddress: 1200 },
  mcp: { perPrincipal: 1200, perAddress: 1200 },
  uploads: { perPrincipal: 60, perAddress: 120 },
  admin: { perPrincipal: 120, perAddress: 300 },
};

const limit = (field: string, fallback: number) => z.number().int().min(1).max(1_000_000).default(fallback).describe(`${field}: requests per window`);
/** One family's limits; a field not given keeps the family's default. */
const familySchema = (family: RateFamily) => {
  const { perPrincipal, perAddress } = DEFAULT_RATE_FAMILIES[family];
  return z.strictObject({ perPrincipal: limit('perPrincipal', perPrincipal), perAddress: limit('perAddress', perAddress) }).default({ perPrincipal, perAddress });
};

/** The settings as a config section takes them; every field has its default. */
export const rateLimitSettingsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  windowSeconds: z.number().int().min(1).max(3600).default(60),
  families: z.strictObject(Object.fromEntries(RATE_FAMILIES.map((f) => [f, familySchema(f)])) as Record<RateFamily, ReturnType<typeof familySchema>>).default(DEFAULT_RATE_FAMILIES),
  /** Source addresses never limited (e.g. the monitoring host); exact addresses as fastify reports them. */
  allowAddresses: z.array(z.string().min(1).max(64)).max(100).default([]),
});
export type RateLimitSettings = z.output<typeof rateLimitSettingsSchema>;
export const DEFAULT_RATE_LIMITS: RateLimitSettings = rateLimitSettingsSchema.parse({});

/** A role's `rateLimits` config field: the limits on unless its section says otherwise (`communication`, `programs`, `cloud`). */
export const rateLimitsField = () => rateLimitSettingsSchema.default(DEFAULT_RATE_LIMITS);

/** The limits turned off, for fixtures and benchmarks that send bursts no client would. */
export const NO_RATE_LIMITS: RateLimitSettings = { ...DEFAULT_RATE_LIMITS, enabled: false };

/** What a surface is told when it must refuse a request. */
export interface RateLimitRefusal {
  family: RateFamily;
  /** Which count went over: the caller's or the source address's. */
  per: 'principal' | 'address';
  limit: number;
  windowSeconds: number;
  retryAfterSec: number;
  /** A sentence for the error body. */
  message: string;
}

/** Answers a refused request in the surface's own error format (status 429, Retry-After). */
export type RefuseRequest = (request: FastifyRequest, reply: FastifyReply, refusal: RateLimitRefusal) => FastifyReply;

/**
 * An `/mcp` request over a limit, as JSON-RPC (the gateway's and the
 * cloud's): 429 with Retry-After and the code the MCP SDK's transport uses
 * for its own refusals (-32000); the id is null since the body is not read.
 */
export const refuseRateLimitedJsonRpc: RefuseRequest = (_request, reply, refusal) =>
  reply.code(429).header('retry-after', String(refusal.retryAfterSec)).send({ jsonrpc: '2.0', error: { code: -32000, message: `Too many requests: ${refusal.message}` }, id: null });

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The family a request falls in; null for requests never limited (probes). */
export function familyOf(request: FastifyRequest): RateFamily | null {
  const url = request.routeOptions.url;
  if (url === HEALTH_PATH || url === READY_PATH) return null;
  if (url === '/mcp') return 'mcp';
  if (url !== undefined && url.endsWith('/auth/login')) return 'login';
  if (url !== undefined && url.startsWith('/admin/')) return 'admin';
  if (READ_METHODS.has(request.method)) return 'reads';
  if ((request.routeOptions.bodyLimit ?? 0) >= UPLOAD_BODY_THRESHOLD) return 'uploads';
  return 'writes';
}

/** The value of the first cookie whose name has `session` in it (the program service's session cookie), read without a regular expression over the header. */
function sessionCookie(header: string): string | undefined {
  for (const part of header.slice(0, 8192).split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).toLowerCase().includes('session')) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/** The key of the caller: the authenticated principal, else a hash of the credential presented; undefined for none. */
export function principalKey(request: FastifyRequest): string | undefined {
  const user = request.principal?.username;
  if (user) return `user:${user}`;
  const rest = request.restPrincipal;
  if (rest) return `${rest.kind}:${rest.id}`;
  const { authorization, accesstoken, cookie } = request.headers;
  const session = typeof cookie === 'string' ? sessionCookie(cookie) : undefined;
  const credential = typeof authorization === 'string' ? authorization : typeof accesstoken === 'string' ? accesstoken : session;
  if (!credential) return undefined;
  return `credential:${createHash('sha256').update(credential.slice(0, 4096)).digest('base64url').slice(0, 22)}`;
}

type StoreAnswer = (err: Error | null, result?: { current: number; ttl: number }) => void;
interface CountingStore {
  incr(key: string, done: StoreAnswer, timeWindow: number, max: number): void;
  read(key: string, done: StoreAnswer, timeWindow: number, max: number): void;
  child(routeOptions: { continueExceeding?: boolean; exponentialBackoff?: boolean; cache?: number }): CountingStore;
}
type LocalStoreCtor = new (continueExceeding?: boolean, exponentialBackoff?: boolean, cache?: number) => CountingStore;
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as LocalStoreCtor;

/**
 * The library's in-memory store, answering each count as it was when
 * counted. The store hands out the very record it keeps and the limiter
 * reads it a few microtasks later, so requests counted in the same tick
 * (a burst on one connection, concurrent calls) would each read the last
 * count and all be refused, the first ones included.
 */
class SnapshotStore implements CountingStore {
  private readonly inner: CountingStore;

  constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean; cache?: number } = {}, inner?: CountingStore) {
    this.inner = inner ?? new LocalStore(options.continueExceeding, options.exponentialBackoff, options.cache);
  }

  incr(key: string, done: StoreAnswer, timeWindow: number, max: number): void {
    this.inner.incr(key, (err, result) => done(err, result && { current: result.current, ttl: result.ttl }), timeWindow, max);
  }

  read(key: string, done: StoreAnswer, timeWindow: number, max: number): void {
    this.inner.read(key, (err, result) => done(err, result && { current: result.current, ttl: result.ttl }), timeWindow, max);
  }

  child(routeOptions: { continueExceeding?: boolean; exponentialBackoff?: boolean; cache?: number }): CountingStore {
    return new SnapshotStore(routeOptions, this.inner.child(routeOptions));
  }
}

type Checker = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded?: boolean; ttlInSeconds?: number; max?: number }>;


/**
 * Limits every request of `app` as `settings` say; `refuse` answers the
 * requests over a limit. Call before the app is ready.
 */
export async function installRateLimits(app: FastifyInstance, settings: RateLimitSettings, refuse: RefuseRequest, metrics?: RoleMetrics): Promise<void> {
  if (!settings.enabled) return;
  await app.register(fastifyRateLimit, { global: false, store: SnapshotStore as never });
  const create = (app as unknown as { createRateLimit(options: object): Checker }).createRateLimit;
  const windowMs = settings.windowSeconds * 1000;
  const allowed = new Set(settings.allowAddresses);
  const limiters = new Map<RateFamily, { address: Checker; principal: Checker }>();
  for (const family of RATE_FAMILIES) {
    const { perAddress, perPrincipal } = settings.families[family];
    limiters.set(family, {
      address: create({ max: perAddress, timeWindow: windowMs, keyGenerator: (request: FastifyRequest) => `${family}|${normalizeIP(request.ip)}` }),
      principal: create({ max: perPrincipal, timeWindow: windowMs, keyGenerator: (request: FastifyRequest) => `${family}|${principalKey(request) ?? ''}` }),
    });
  }
  const refused = metrics?.counter({ name: 'http_rate_limited_total', help: 'Requests answered 429 by a rate limit, by family and by what was counted (principal or address).', labelNames: ['family', 'per'] });

  const check = async (request: FastifyRequest, reply: FastifyReply, per: 'principal' | 'address'): Promise<FastifyReply | undefined> => {
    const family = familyOf(request);
    if (family === null || allowed.has(request.ip)) return undefined;
    if (per === 'principal' && principalKey(request) === undefined) return undefined;
    const limiter = limiters.get(family) as { address: Checker; principal: Checker };
    const outcome = await limiter[per](request);
    if (outcome.isAllowed || !outcome.isExceeded) return undefined;
    const retryAfterSec = Math.max(1, outcome.ttlInSeconds ?? settings.windowSeconds);
    const max = outcome.max ?? 0;
    refused?.inc({ family, per });
    if (!drainsRefusedBody(request)) reply.header('connection', 'close');
    const who = per === 'address' ? 'this source address' : 'this caller';
    return (family === 'mcp' ? refuseRateLimitedJsonRpc : refuse)(request, reply, {
      family, per, limit: max, windowSeconds: settings.windowSeconds, retryAfterSec,
      message: `more than ${max} ${family} requests in ${settings.windowSeconds} s from ${who}; retry after ${retryAfterSec} s`,
    });
  };
  // Per address first, before the route's own onRequest hooks authenticate; per principal after them, before the body is read.
  app.addHook('onRequest', async (request, reply) => check(request, reply, 'address'));
  app.addHook('preParsing', async (request, reply, payload) => {
    const answered = await check(request, reply, 'principal');
    return answered ?? payload;
  });
}
