/**
 * The cloud's admin HTTP interface for gateway tokens, beside the CLI
 * (`npm run cloud-token`): every request needs `Authorization: Bearer
 * cadm_<id>_<secret>`, an admin key made with `npm run cloud-token -- admin
 * create NAME` and stored hashed. A token is in an answer once, when made or
 * rotated; revoking or rotating closes the gateway's broker connection at
 * once when the broker is the embedded one, or an external Mosquitto whose
 * clients the cloud manages (`cloud.dynamicSecurity`: a token's client is
 * added before the token is committed, so a broker that refuses it answers
 * 503 and changes nothing).
 *
 *   GET  /admin/gateway-tokens                 the tokens (never a secret)
 *   POST /admin/gateway-tokens        {name}   a new token, shown once (201)
 *   POST /admin/gateway-tokens/:id/rotate      a new token for the same gateway, the old one revoked
 *   POST /admin/gateway-tokens/:id/revoke      the token ends
 *
 * Errors are `{error, message}` with 400/401/403/404, and 503 when the
 * tokens' database does not answer; a browser Origin is refused unless
 * allowed, as on /mcp.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { quote } from '../../core/interfaces/errors.js';
import type { GatewayUsers } from '../../core/roles/cloud/gateway-users.js';
import type { AdminKeys, GatewayToken, GatewayTokens } from '../../core/roles/cloud/tokens.js';

const ADMIN_BODY_LIMIT = 16 * 1024;

/** The broker did not take a new token's client (so the token was not stored). */
class BrokerRefused extends Error {}
const TOKEN_ID = /^[A-Za-z0-9]{1,64}$/;
const NAME = /^[^\p{Cc}]{1,128}$/u;

export interface AdminHttpOptions {
  tokens: GatewayTokens;
  adminKeys: AdminKeys;
  allowedOrigins: readonly string[];
  logger: Logger;
  /** Called when a token stops being valid, to end that gateway's connection. */
  onRevoked: (id: string) => void;
  /** The gateways' broker clients on an external Mosquitto (`cloud.dynamicSecurity`): added when a token is made, removed when it ends. */
  users?: GatewayUsers | undefined;
}

const shown = (t: GatewayToken) => ({ id: t.id, name: t.name, createdAt: new Date(t.createdAt).toISOString(), revokedAt: t.revokedAt === null ? null : new Date(t.revokedAt).toISOString(), replacedBy: t.replacedBy, valid: t.revokedAt === null });

export function serveAdmin(http: FastifyInstance, o: AdminHttpOptions): void {
  const fail = (reply: FastifyReply, status: number, error: string, message: string) => reply.code(status).send({ error, message });
  /** The tokens' database did not answer (a PostgreSQL server away): 503, nothing changed that was not committed. */
  const unavailable = (reply: FastifyReply, err: Error) => {
    o.logger.error({ err: err.message }, 'cloud: the admin interface could not read or write the tokens; their database does not answer');
    return fail(reply, 503, 'database_unavailable', 'the cloud could not read or write its tokens: their database does not answer; retry in a moment');
  };
  const guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !o.allowedOrigins.includes(origin)) return fail(reply, 403, 'origin_not_allowed', `Origin ${quote(origin)} is not allowed; accepted: ${o.allowedOrigins.length ? o.allowedOrigins.join(', ') : 'no browser origins'}`);
    const header = request.headers.authorization;
    const key = typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7).trim() : undefined;
    let adminId: string | undefined;
    try {
      adminId = await o.adminKeys.verify(key);
    } catch (err) {
      return unavailable(reply, err as Error);
    }
    if (!adminId) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized', message: 'send Authorization: Bearer cadm_… (an admin key: npm run cloud-token -- admin create NAME)' });
    }
    (request as FastifyRequest & { adminId?: string }).adminId = adminId;
  };
  const idOf = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const id = (request.params as { id?: string }).id ?? '';
    if (TOKEN_ID.test(id)) return id;
    void fail(reply, 400, 'invalid_parameter', `id: a token id (1-64 letters and digits, the middle part of cgw_<id>_<secret>); got ${quote(id)}`);
    return undefined;
  };
  const audit = (request: FastifyRequest, what: string, id: string) =>
    o.logger.info({ admin: (request as FastifyRequest & { adminId?: string }).adminId, tokenId: id }, `gateway token ${what} through the admin interface`);

  /** Adds a new token's broker client; the broker's failure is told apart from the database's. */
  const addClient = o.users && (async (id: string, token: string) => {
    try {
      await o.users!.addGateway(id, token);
    } catch (err) {
      throw new BrokerRefused((err as Error).message, { cause: err });
    }
  });
  /** A token change that adds a broker client first: the broker refusing it or not answering changes nothing and answers 503. */
  const brokerChange = async <T>(reply: FastifyReply, change: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await change();
    } catch (err) {
      if (!(err instanceof BrokerRefused)) throw err;
      o.logger.error({ err: (err as Error).message }, 'cloud: the broker did not take a gateway token\'s client; the token was not changed');
      await fail(reply, 503, 'broker_unavailable', `the broker did not take the gateway's client, so the token was not changed: ${(err as Error).message}`);
      return undefined;
    }
  };
  /** A token ended: its broker client removed (the broker disconnects it at once), its gateway unavailable and its calls ended. */
  const ended = async (id: string) => {
    o.onRevoked(id);
    await o.users?.removeGateway(id).catch((err: Error) => o.logger.error({ tokenId: id, err: err.message }, 'cloud: the broker client of a revoked gateway token could not be removed; it is removed when the cloud starts next'));
  };
  http.register(
    async (scope) => {
      scope.addHook('onRequest', guard);
      // A client's mistake keeps its own answer; anything else here is the tokens' database not answering.
      scope.setErrorHandler((err: Error & { statusCode?: number }, _request, reply) => {
        if (err.statusCode !== undefined && err.statusCode < 500) throw err;
        return unavailable(reply, err);
      });
      scope.get('/gateway-tokens', async () => ({ tokens: (await o.tokens.list()).map(shown) }));
      scope.post('/gateway-tokens', { bodyLimit: ADMIN_BODY_LIMIT }, async (request, reply) => {
        const body = request.body as { name?: unknown } | undefined;
        const extra = body && typeof body === 'object' ? Object.keys(body).filter((k) => k !== 'name') : [];
        if (!body || typeof body !== 'object' || typeof body.name !== 'string' || !NAME.test(body.name) || extra.length > 0) {
          return fail(reply, 400, 'invalid_parameter', extra.length > 0
            ? `unknown field ${quote(extra[0] as string)}; accepted: name`
            : 'name: the gateway\'s name, 1-128 characters without control characters');
        }
        const made = await brokerChange(reply, () => o.tokens.create(body.name as string, addClient));
        if (!made) return reply;
        audit(request, 'created', made.record.id);
        return reply.code(201).send({ token: made.token, record: shown(made.record), shownOnce: true });
      });
      scope.post('/gateway-tokens/:id/rotate', async (request, reply) => {
        const id = idOf(request, reply);
        if (id === undefined) return reply;
        const next = await brokerChange(reply, () => o.tokens.rotate(id, addClient));
        if (reply.sent) return reply;
        if (!next) return fail(reply, 404, 'not_found', `no valid gateway token with id ${quote(id)}; GET /admin/gateway-tokens lists them`);
        audit(request, `rotated to ${next.record.id}`, id);
        await ended(id);
        return reply.code(201).send({ token: next.token, record: shown(next.record), replaces: id, shownOnce: true });
      });
      scope.post('/gateway-tokens/:id/revoke', async (request, reply) => {
        const id = idOf(request, reply);
        if (id === undefined) return reply;
        if (!(await o.tokens.revoke(id))) return fail(reply, 404, 'not_found', `no valid gateway token with id ${quote(id)}; GET /admin/gateway-tokens lists them`);
        audit(request, 'revoked', id);
        await ended(id);
        return { revoked: id };
      });
    },
    { prefix: '/admin' },
  );
}
