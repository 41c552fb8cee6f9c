/**
 * OAuth 2.1 for remote MCP clients of the cloud's /mcp, as the MCP
 * authorization specification (2025-06-18) asks: the Protected Resource
 * Metadata (RFC 9728) at /.well-known/oauth-protected-resource (and under
 * /mcp), a 401 with `WWW-Authenticate: Bearer resource_metadata=…` for a
 * request that brings no credential, bearer JWTs checked against the
 * issuer's keys with the audience this resource (RFC 8707,
 * core/auth/oauth-access-tokens.ts), and the gateways a token may see read
 * from its claims through the `mcpAuth.gateways` mapping. The gateway
 * tokens in `accessToken` keep working beside it; a user's token is never
 * passed on to a gateway (the relay carries the call, not the credential).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { algorithmsSchema, claimNameSchema, claimValues, isRefusal as isDoorRefusal, ProtectedResource } from '../../core/auth/protected-resource.js';
import type { DoorRefusal } from '../../core/mcp/http-door.js';

/** `cloud.mcpAuth`: who issues the tokens, this resource's URL, and what a token's claims let it see. */
export const mcpAuthSchema = z
  .object({
    /** The identity provider's issuer URL, exactly as its tokens' `iss` says. */
    issuer: z.string().url().max(2048),
    /** This /mcp's URL as clients reach it (e.g. https://cloud.example.com/mcp): the tokens' audience and the metadata's `resource`. */
    resource: z.string().url().max(2048),
    /** The claim whose values name the gateways a token may see (a string or an array of strings). */
    gatewaysClaim: claimNameSchema.default('gateways'),
    /**
     * Claim values and the gateway names each grants ("*" for every gateway).
     * Empty: a claim value is itself a gateway name.
     */
    gateways: z.record(z.string().min(1).max(256), z.array(z.string().min(1).max(128)).max(1000)).default({}),
    /** Accepted signing algorithms (asymmetric only). */
    algorithms: algorithmsSchema,
    /** The name the metadata gives this resource. */
    resourceName: z.string().min(1).max(128).default('CNC machine gateway cloud'),
  })
  .strict();

export type McpAuthSettings = z.infer<typeof mcpAuthSchema>;

/** Who a request to /mcp is: a gateway token (or none), or an OAuth identity with the gateway names it may see ('*' all). */
export type McpCaller = { kind: 'token' } | { kind: 'oauth'; subject: string; gateways: '*' | readonly string[] };

/** The gateway names a token's claims grant through the mapping. */
export function grantedGateways(settings: McpAuthSettings, payload: JWTPayload): '*' | string[] {
  const values = claimValues(payload, settings.gatewaysClaim);
  const mapping = settings.gateways;
  if (Object.keys(mapping).length === 0) return values;
  const names = new Set<string>();
  for (const value of values) {
    for (const name of mapping[value] ?? []) {
      if (name === '*') return '*';
      names.add(name);
    }
  }
  return [...names];
}

/** The OAuth side of the cloud's /mcp. */
export class McpOAuth {
  private readonly resource: ProtectedResource;

  constructor(readonly settings: McpAuthSettings) {
    this.resource = new ProtectedResource({ issuer: settings.issuer, resource: settings.resource, algorithms: settings.algorithms, resourceName: settings.resourceName });
  }

  /** Serves the Protected Resource Metadata (RFC 9728). */
  serveMetadata(http: FastifyInstance): void {
    this.resource.serveMetadata(http);
  }

  /**
   * Who the request is, from its headers: a gateway token (`accessToken`) is
   * the relay's business; a bearer token is checked here; neither is refused
   * with the challenge that starts a client's authorization.
   */
  async identify(request: FastifyRequest): Promise<McpCaller | DoorRefusal> {
    const authorization = request.headers.authorization;
    if (typeof authorization !== 'string' || !/^bearer /i.test(authorization)) {
      if (request.headers.accesstoken !== undefined) return { kind: 'token' };
      return this.resource.unauthenticated('This /mcp needs an access token from the identity provider (or a gateway accessToken header)');
    }
    const checked = await this.resource.check(authorization.slice(7).trim());
    if (isDoorRefusal(checked)) return checked;
    return { kind: 'oauth', subject: checked.subject, gateways: grantedGateways(this.settings, checked.payload) };
  }
}

/** Whether `identify` refused the request. */
export function isRefusal(x: McpCaller | DoorRefusal): x is DoorRefusal {
  return isDoorRefusal(x);
}
