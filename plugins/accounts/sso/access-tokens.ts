/**
 * The provider's access tokens on `/api/v1`, for MES and CAM systems (a
 * client-credentials token) or a tool acting for a person: a JWT whose
 * audience is this service's URL (`programs.oidc.publicUrl`), checked by
 * `AccessTokenVerifier` (the provider's JWKS, algorithms pinned, issuer,
 * audience, expiry, size), and mapped like a person's claims
 * (`programs.oidc.roles`, `.libraries`, `.machineGroups`). A token whose
 * claims map to no role is refused (403), one that is not acceptable 401
 * with the reason, and while the provider's keys cannot be read 503.
 */
import { AccessTokenError, AccessTokenVerifier } from '../../../core/auth/oauth-access-tokens.js';
import { seenValues, textClaim } from '../../../core/auth/oidc-claims.js';
import type { RestPrincipal, RestRequestInfo } from '../../../core/rest/operation.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { RefusalAudit } from '../refusal-audit.js';
import { ROLE_PERMISSIONS } from '../roles.js';
import type { ProgramsOidcSettings } from './config.js';
import { mappedClaimPaths, programsGrant } from './grant.js';

/** The OpenAPI security scheme of these tokens. */
export const ACCESS_TOKEN_SCHEME = 'providerAccessToken';

export class ProviderAccessTokens {
  private readonly verifier: AccessTokenVerifier;

  constructor(
    private readonly settings: ProgramsOidcSettings,
    readonly issuer: string,
    /** This service's URL: the audience the tokens must carry. */
    readonly audience: string,
    private readonly refusals: RefusalAudit,
    now: () => number,
  ) {
    this.verifier = new AccessTokenVerifier({ issuer, audience, now });
  }

  /** The caller a token is, or a problem (401 not acceptable, 403 no role mapped, 503 the provider's keys unreadable). */
  async principal(request: RestRequestInfo, token: string, onBehalfOf: string | null): Promise<RestPrincipal> {
    let claims: Record<string, unknown>;
    try {
      claims = await this.verifier.verify(token);
    } catch (err) {
      if (!(err instanceof AccessTokenError)) throw err;
      if (err.reason === 'issuer-unavailable') throw new ProblemError('service-unavailable', 'the identity provider cannot be reached to check the access token; try again shortly', { retryAfterSec: 10 });
      await this.refusals.record(`access-token:${request.sourceIp}`, {
        principalName: '(unknown)', authMethod: 'accessToken', category: 'auth', action: 'token.invalid', entityType: null, entityId: null,
        details: { sourceIp: request.sourceIp.slice(0, 64), path: request.path.slice(0, 200), reason: err.reason },
      });
      throw new ProblemError('unauthenticated', `the access token is not accepted: ${err.message}`);
    }
    const subject = String(claims.sub ?? claims.client_id ?? '(no subject)').slice(0, 128);
    const name = (textClaim(claims, 'client_id', 128) ?? textClaim(claims, 'azp', 128) ?? subject);
    const grant = programsGrant(claims, this.settings);
    if (!grant) {
      const seen = seenValues(claims, mappedClaimPaths(this.settings), 20);
      await this.refusals.record(`access-token-unmapped:${subject}`, {
        principalName: name, authMethod: 'accessToken', category: 'auth', action: 'access.refused', entityType: null, entityId: null,
        details: { sourceIp: request.sourceIp.slice(0, 64), reason: 'no role mapped', seen },
      });
      const shown = seen.map((s) => `${s.claim}: ${s.values.length ? s.values.join(', ') : 'none'}`).join('; ');
      throw new ProblemError('forbidden', `the access token's claims map to no role (${shown}); an administrator maps one in programs.oidc.roles`, { extensions: { seen } });
    }
    return {
      kind: 'serviceToken', id: `idp:${subject}`, name, role: grant.role, permissions: ROLE_PERMISSIONS[grant.role], scopes: grant.scopes,
      authMethod: 'accessToken', onBehalfOf, requiresOperator: false,
    };
  }

  /** The security scheme the OpenAPI document declares. */
  scheme(): Record<string, unknown> {
    return {
      type: 'openIdConnect',
      openIdConnectUrl: `${this.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
      description: `An access token of the identity provider (a JWT, e.g. from the client credentials grant), sent as Authorization: Bearer. Its audience must be ${this.audience} (ask for it with resource=${this.audience}, RFC 8707); its claims map to a role and scopes as people's do (programs.oidc.roles, .libraries, .machineGroups).`,
    };
  }
}
