/**
 * OAuth 2.1 for remote MCP clients on the gateway's own /mcp (`mcp.mcpAuth`,
 * docs/identity.md): the Protected Resource Metadata (RFC 9728), the 401
 * with the challenge that starts a client's authorization, and bearer JWTs
 * of the identity provider checked by the shared resource server
 * (core/auth/protected-resource.ts). A token's machine groups come from its
 * `groupsClaim` through the `groups` mapping; the caller then sees those
 * groups' machines only (core/mcp/machine-scope.ts). The gateway's own JWTs
 * and secret keys keep working beside it, through the access policy.
 */
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { algorithmsSchema, claimNameSchema, claimValues, isRefusal, ProtectedResource } from '../../core/auth/protected-resource.js';
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import type { Principal } from '../../core/interfaces/registry.js';
import type { DoorRefusal } from '../../core/mcp/http-door.js';
import { groupIdSchema } from '../../core/roles/gateway/machine-config.js';

/** `mcp.mcpAuth`: who issues the tokens, this /mcp's URL, and which machine groups a token's claims grant. */
export const gatewayMcpAuthSchema = z
  .object({
    /** The identity provider's issuer URL, exactly as its tokens' `iss` says. */
    issuer: z.string().url().max(2048),
    /** This /mcp's URL as clients reach it (e.g. https://gateway-01.plant.example/mcp): the tokens' `aud` and the metadata's `resource`. */
    audience: z.string().url().max(2048),
    /** The claim whose values (a string or an array of strings) are mapped to machine groups. */
    groupsClaim: claimNameSchema.default('groups'),
    /** Claim value → the groupIDs it grants, or "*" for every machine. A token none of whose values is mapped is refused (403). */
    groups: z.record(z.string().min(1).max(256), z.union([z.literal('*'), z.array(groupIdSchema).max(1000)])).default({}),
    /** The claim holding the token's scopes; absent: `scope` (space-separated), else `scp`. */
    scopesClaim: claimNameSchema.optional(),
    /** Accepted signing algorithms (asymmetric only). */
    algorithms: algorithmsSchema,
    /** The name the metadata gives this resource. */
    resourceName: z.string().min(1).max(128).default('CNC machine gateway'),
  })
  .strict();

export type GatewayMcpAuthSettings = z.output<typeof gatewayMcpAuthSchema>;

/** The machine groups a token's claims grant: '*' for every machine, else the groupIDs (possibly none). */
export function grantedGroups(settings: GatewayMcpAuthSettings, payload: JWTPayload): '*' | string[] {
  const groups = new Set<string>();
  for (const value of claimValues(payload, settings.groupsClaim)) {
    const granted = settings.groups[value];
    if (granted === '*') return '*';
    for (const id of granted ?? []) groups.add(id);
  }
  return [...groups];
}

/** The header of a compact JWT, or undefined when it is not one. */
function jwtHeader(token: string): Record<string, unknown> | undefined {
  const [head, body] = token.split('.');
  if (!head || !body) return undefined;
  try {
    const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as unknown;
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null) return undefined;
    return { ...(header as Record<string, unknown>), iss: (payload as Record<string, unknown>).iss };
  } catch {
    return undefined;
  }
}

/** The OAuth side of the gateway's /mcp. */
export class GatewayMcpOAuth {
  readonly resource: ProtectedResource;

  constructor(private readonly settings: GatewayMcpAuthSettings) {
    this.resource = new ProtectedResource({
      issuer: settings.issuer,
      resource: settings.audience,
      algorithms: settings.algorithms,
      resourceName: settings.resourceName,
      scopesClaim: settings.scopesClaim,
    });
  }

  /**
   * The bearer token of the request when it is the provider's to check: a
   * JWT naming the issuer, or signed with anything but the gateway's own
   * HS256 (so `none`, or an HMAC "signed" with the public key, is refused
   * here with the challenge). The gateway's JWTs and secret keys are the
   * access policy's.
   */
  providerToken(request: FastifyRequest): string | undefined {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(typeof request.headers.authorization === 'string' ? request.headers.authorization : '');
    const token = match?.[1];
    if (!token || token.startsWith('gwk_') || token.length > 64 * 1024) return undefined;
    const header = jwtHeader(token);
    if (!header) return undefined;
    return header.iss === this.settings.issuer || header.alg !== 'HS256' ? token : undefined;
  }

  /** The caller of a provider's token: its principal (its machine groups narrowing what it sees), or the refusal. */
  async principal(token: string): Promise<Principal | DoorRefusal> {
    const checked = await this.resource.check(token);
    if (isRefusal(checked)) return checked;
    const groups = grantedGroups(this.settings, checked.payload);
    const username = `oauth:${checked.subject}`;
    if (groups === '*') return { username, isAdmin: false, method: 'oauth' };
    if (groups.length === 0) {
      const seen = claimValues(checked.payload, this.settings.groupsClaim).slice(0, 10).map((v) => quote(v.slice(0, 64)));
      return {
        status: 403,
        challenge: this.resource.challenge(', error="insufficient_scope"'),
        error: new GatewayError(
          'FORBIDDEN',
          `The access token grants no machine group: its ${this.settings.groupsClaim} claim has ${seen.length ? seen.join(', ') : 'no value'}; an administrator must map one of them in mcp.mcpAuth.groups`,
        ),
      };
    }
    return { username, isAdmin: false, method: 'oauth', machineGroups: groups };
  }

  /** A refusal of the access policy (401) as this resource words it: with the challenge, `invalid_token` when a credential was sent. */
  challenged(request: FastifyRequest, error: GatewayError): DoorRefusal {
    if (request.headers.authorization === undefined || error.errorName === 'IP_NOT_IN_WHITE_LIST') return { status: error.httpStatus, challenge: this.resource.challenge(), error };
    return this.resource.invalidToken(error, 'the bearer token is neither a valid token of the identity provider nor a JWT or secret key of this gateway');
  }
}
