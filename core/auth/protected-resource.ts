/**
 * An OAuth 2.1 protected resource as the MCP authorization specification
 * (2025-06-18) asks, shared by every /mcp that takes an identity provider's
 * tokens (the cloud's and the gateway's): the Protected Resource Metadata
 * (RFC 9728) at /.well-known/oauth-protected-resource and under the
 * resource's path, the `WWW-Authenticate: Bearer resource_metadata=…`
 * challenge that starts a client's authorization, and a bearer JWT checked
 * against the issuer's keys with the audience this resource (RFC 8707,
 * ./oauth-access-tokens.ts), refused as RFC 6750 words it. What a token's
 * claims let it see is the role's business.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { GatewayError } from '../interfaces/errors.js';
import type { DoorRefusal } from '../mcp/http-door.js';
import { AccessTokenError, AccessTokenVerifier, DEFAULT_ACCESS_TOKEN_ALGORITHMS } from './oauth-access-tokens.js';

/** The one scope of the read tools. */
export const FLEET_READ_SCOPE = 'fleet:read';

/** A claim name of the settings. */
export const claimNameSchema = z.string().min(1).max(128);
/** The accepted signing algorithms of the settings (asymmetric only). */
export const algorithmsSchema = z.array(z.enum(DEFAULT_ACCESS_TOKEN_ALGORITHMS)).min(1).optional();

/** The claim's values as strings (a string, space-separated values for `scope` and `scp`, or an array of strings; anything else none). */
export function claimValues(payload: JWTPayload, claim: string): string[] {
  const value = payload[claim];
  if (typeof value === 'string') return claim === 'scope' || claim === 'scp' ? value.split(' ').filter(Boolean) : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').slice(0, 1000);
  return [];
}

/** The scopes a token carries: `scopesClaim` when given, else `scope` (space-separated) or `scp` (an array). */
export function scopesOf(payload: JWTPayload, scopesClaim?: string): string[] {
  if (scopesClaim) return claimValues(payload, scopesClaim);
  if (typeof payload.scope === 'string') return claimValues(payload, 'scope');
  return claimValues(payload, 'scp');
}

export interface ProtectedResourceOptions {
  issuer: string;
  /** This resource's URL as clients reach it: the tokens' audience and the metadata's `resource`. */
  resource: string;
  algorithms?: readonly string[] | undefined;
  resourceName: string;
  /** The claim holding the token's scopes (default `scope`, else `scp`). */
  scopesClaim?: string | undefined;
}

/** A token that passed: its claims and the subject, bounded. */
export interface CheckedToken {
  payload: JWTPayload;
  subject: string;
}

/** One protected resource: its metadata, its challenge, its tokens' check. */
export class ProtectedResource {
  private readonly verifier: AccessTokenVerifier;
  /** The metadata's path under the resource's path (RFC 9728 §3.1). */
  readonly metadataPath: string;

  constructor(readonly options: ProtectedResourceOptions) {
    this.verifier = new AccessTokenVerifier({ issuer: options.issuer, audience: options.resource, ...(options.algorithms ? { algorithms: options.algorithms } : {}) });
    this.metadataPath = `/.well-known/oauth-protected-resource${new URL(options.resource).pathname.replace(/\/$/, '')}`;
  }

  /** The Protected Resource Metadata document (RFC 9728). */
  metadata(): Record<string, unknown> {
    return {
      resource: this.options.resource,
      authorization_servers: [this.options.issuer],
      scopes_supported: [FLEET_READ_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: this.options.resourceName,
    };
  }

  /** Serves the metadata at the well-known path and under the resource's path. */
  serveMetadata(http: FastifyInstance): void {
    const metadata = (_request: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', 'max-age=300').send(this.metadata());
    http.get('/.well-known/oauth-protected-resource', metadata);
    if (this.metadataPath !== '/.well-known/oauth-protected-resource') http.get(this.metadataPath, metadata);
  }

  /** The metadata's URL on this resource's origin. */
  metadataUrl(): string {
    return new URL(this.metadataPath, this.options.resource).toString();
  }

  /** The `WWW-Authenticate` value: where the metadata is, the scope, and `extra` (an RFC 6750 error). */
  challenge(extra = ''): string {
    return `Bearer resource_metadata="${this.metadataUrl()}", scope="${FLEET_READ_SCOPE}"${extra}`;
  }

  /** The 401 of a request without a credential: the challenge that starts a client's authorization. */
  unauthenticated(text: string): DoorRefusal {
    return { status: 401, challenge: this.challenge(), error: new GatewayError('UNAUTHORIZED', text) };
  }

  /** The refusal of a credential other than this issuer's that did not pass: 401 `invalid_token` with the challenge. */
  invalidToken(error: GatewayError, reason: string): DoorRefusal {
    return { status: 401, challenge: this.challenge(`, error="invalid_token", error_description="${reason.replace(/["\\]/g, "'")}"`), error };
  }

  /**
   * The bearer token's claims when it is this issuer's, for this resource,
   * with the read scope; else the refusal (401 invalid_token, 403
   * insufficient_scope, 503 when the provider cannot be reached).
   */
  async check(token: string): Promise<CheckedToken | DoorRefusal> {
    let payload: JWTPayload;
    try {
      payload = await this.verifier.verify(token);
    } catch (err) {
      const refusal = err instanceof AccessTokenError ? err : new AccessTokenError('malformed', 'the access token could not be read');
      if (refusal.reason === 'issuer-unavailable') {
        return { status: 503, challenge: this.challenge(), error: new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', `The identity provider cannot be reached to check the access token: ${refusal.message}`) };
      }
      return this.invalidToken(new GatewayError('UNAUTHORIZED', `The access token is refused: ${refusal.message}`), refusal.message);
    }
    if (!scopesOf(payload, this.options.scopesClaim).includes(FLEET_READ_SCOPE)) {
      return { status: 403, challenge: this.challenge(', error="insufficient_scope"'), error: new GatewayError('FORBIDDEN', `The access token lacks the scope ${FLEET_READ_SCOPE}`) };
    }
    return { payload, subject: typeof payload.sub === 'string' ? payload.sub.slice(0, 256) : '' };
  }
}

/** Whether a check's answer is a refusal. */
export function isRefusal<T extends object>(x: T | DoorRefusal): x is DoorRefusal {
  return 'status' in x && 'challenge' in x;
}
