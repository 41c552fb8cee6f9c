/**
 * What a server does with the body of a request it refuses before reading
 * it (core/http/rate-limit.ts, the authentication of core/http/http-server.ts and
 * core/rest/serve.ts): read and throw it away, or close the connection.
 */
import type { FastifyRequest } from 'fastify';

/**
 * Whether a refused request's body is read and thrown away after the answer
 * (a 429 of a rate limit, a 401 or 403 given before the body is read)
 * rather than the connection closed: when it declares its length and the
 * route would have read that much anyway. Closing a connection whose client
 * is still sending makes the server's TCP answer the rest with a reset,
 * which destroys the answer in the client's buffer before it is read (the
 * client sees ECONNRESET or EPIPE, not the refusal); reading the body first
 * lets the answer arrive, on a connection that stays open. A body without a
 * length, or longer than the route takes, still closes the connection: the
 * refusal is not a way to make the server read more than it would serve.
 */
export function drainsRefusedBody(request: FastifyRequest): boolean {
  if (request.headers['transfer-encoding'] !== undefined) return false;
  const length = request.headers['content-length'];
  if (length === undefined || length === '0') return true;
  const bytes = Number(length);
  return Number.isSafeInteger(bytes) && bytes >= 0 && bytes <= (request.routeOptions.bodyLimit ?? 0);
}
