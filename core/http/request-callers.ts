/**
 * Who made a request, as the surfaces note it on fastify's request: the
 * gateway's `/api` (core/http/http-server.ts) its principal, the program service's
 * `/api/v1` (core/rest/serve.ts) its own. Declared here, once, for the
 * surfaces that set them and for what reads them (the per-caller rate
 * limits, core/http/rate-limit.ts).
 */
import type { Principal } from '../interfaces/registry.js';
import type { RestPrincipal } from '../rest/operation.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, set by the route's onRequest hook; null on routes without one. */
    principal: Principal | null;
    /** The program service's caller, set by the route's onRequest hook. */
    restPrincipal: RestPrincipal | null;
  }
}
