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
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { AccessTokenError, AccessTokenVerifier, DEFAULT_ACCESS_TOKEN_ALGORITHMS } from '../../core/auth/oauth-access-tokens.js';
import { GatewayError } from '../../core/errors.js';
import type { DoorRefusal } from '../../core/mcp/http-door.js';

/** The one scope of the read tools. */
export const FLEET_READ_SCOPE = 'fleet:read';

/** `cloud.mcpAuth`: who issues the tokens, this resource's URL, and what a token's claims let it see. */
export const mcpAuthSchema = z
  .object({
    /** The identity provider's issuer URL, exactly as its tokens' `iss` says. */
    issuer: z.string().url().max(2048),
    /** This /mcp's URL as clients reach it (e.g. https://cloud.example.com/mcp): the tokens' audience and the metadata's `resource`. */
    resource: z.string().url().max(2048),
    /** The claim whose values name the gateways a token may see (a string or an array of strings). */
    gatewaysClaim: z.string().min(1).max(128).default('gateways'),
    /**
     * Claim values and the gateway names each grants ("*" for every gateway).
     * Empty: a claim value is itself a gateway name.
     */
    gateways: z.record(z.string().min(1).max(256), z.array(z.string().min(1).max(128)).max(1000)).default({}),
    /** Accepted signing algorithms (asymmetric only). */
    algorithms: z.array(z.enum(DEFAULT_ACCESS_TOKEN_ALGORITHMS)).min(1).optional(),
    /** The name the metadata gives this resource. */
    resourceName: z.string().min(1).max(128).default('CNC machine gateway cloud'),
  })
  .strict();

export type McpAuthSettings = z.infer<typeof mcpAuthSchema>;

/** Who a request to /mcp is: a gateway token (or none), or an OAuth identity with the gateway names it may see ('*' all). */
export type McpCaller = { kind: 'token' } | { kind: 'oauth'; subject: string; gateways: '*' | readonly string[] };

/** The claim's values as strings (a string, or an array of strings; anything else none). */
function claimValues(payload: JWTPayload, claim: string): string[] {
  const value = payload[claim];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').slice(0, 1000);
  return [];
}

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

/** The scopes a token carries (`scope`, space-separated, or `scp`, an array). */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  const scp = payload.scp;
  return Array.isArray(scp) ? scp.filter((s): s is string => typeof s === 'string') : [];
}

/** A refusal as RFC 6750 writes it: status, the challenge, the body. */
type Refusal = DoorRefusal;

/** The OAuth side of the cloud's /mcp. */
export class McpOAuth {
  private readonly verifier: AccessTokenVerifier;
  readonly metadataPath: string;

  constructor(readonly settings: McpAuthSettings) {
    this.verifier = new AccessTokenVerifier({ issuer: settings.issuer, audience: settings.resource, ...(settings.algorithms ? { algorithms: settings.algorithms } : {}) });
    this.metadataPath = `/.well-known/oauth-protected-resource${new URL(settings.resource).pathname.replace(/\/$/, '')}`;
  }

  /** The Protected Resource Metadata document (RFC 9728). */
  metadata(): Record<string, unknown> {
    return {
      resource: this.settings.resource,
      authorization_servers: [this.settings.issuer],
      scopes_supported: [FLEET_READ_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: this.settings.resourceName,
    };
  }

  /** The metadata's URL on this resource's origin. */
  metadataUrl(): string {
    return new URL(this.metadataPath, this.settings.resource).toString();
  }

  private challenge(extra = ''): string {
    return `Bearer resource_metadata="${this.metadataUrl()}", scope="${FLEET_READ_SCOPE}"${extra}`;
  }

  /**
   * Who the request is, from its headers: a gateway token (`accessToken`) is
   * the relay's business; a bearer token is checked here; neither is refused
   * with the challenge that starts a client's authorization.
   */
  async identify(request: FastifyRequest): Promise<McpCaller | Refusal> {
    const authorization = request.headers.authorization;
    if (typeof authorization !== 'string' || !/^bearer /i.test(authorization)) {
      if (request.headers.accesstoken !== undefined) return { kind: 'token' };
      return { status: 401, challenge: this.challenge(), error: new GatewayError('UNAUTHORIZED', 'This /mcp needs an access token from the identity provider (or a gateway accessToken header)') };
    }
    let payload: JWTPayload;
    try {
      payload = await this.verifier.verify(authorization.slice(7).trim());
    } catch (err) {
      const refusal = err instanceof AccessTokenError ? err : new AccessTokenError('malformed', 'the access token could not be read');
      if (refusal.reason === 'issuer-unavailable') {
        return { status: 503, challenge: this.challenge(), error: new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', `The identity provider cannot be reached to check the access token: ${refusal.message}`) };
      }
      return { status: 401, challenge: this.challenge(`, error="invalid_token", error_description="${refusal.message.replace(/["\\]/g, "'")}"`), error: new GatewayError('UNAUTHORIZED', `The access token is refused: ${refusal.message}`) };
    }
    if (!scopesOf(payload).includes(FLEET_READ_SCOPE)) {
      return { status: 403, challenge: this.challenge(', error="insufficient_scope"'), error: new GatewayError('FORBIDDEN', `The access token lacks the scope ${FLEET_READ_SCOPE}`) };
    }
    return { kind: 'oauth', subject: typeof payload.sub === 'string' ? payload.sub.slice(0, 256) : '', gateways: grantedGateways(this.settings, payload) };
  }
}

export function isRefusal(x: McpCaller | Refusal): x is Refusal {
  return 'status' in x;
}
