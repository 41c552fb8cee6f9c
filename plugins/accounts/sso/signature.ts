/**
 * An electronic signature needs the signer identified at signing (21 CFR
 * 11.200): a person signed in through the provider approves a program
 * version only while their last authentication there is at most
 * `programs.oidc.maxAuthAgeForApprovalSec` old. An older one is answered
 * 401 `reauthentication-required` with where the browser signs in again
 * (the provider, asked with `max_age`), after which the session carries the
 * new `auth_time` and the approval goes through.
 *
 * Local accounts (the break-glass path) and service tokens approve as
 * before: their session or token was opened with a secret only its holder
 * has, and the service cannot ask a password again without keeping one
 * more secret in the browser. docs/identity.md, "Approvals".
 */
import type { RestPrincipal } from '../../../core/rest/operation.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { OIDC_PREFIX } from '../../../core/auth/oidc-routes.js';

/** What the accounts offer the operations that record a signature (the vault's approvals). */
export interface SignatureCheck {
  /** Throws `reauthentication-required` when `principal` signed in through the provider longer ago than an approval allows. */
  requireRecentSignIn(principal: RestPrincipal): void;
}

declare module '../../../core/roles/programs/context.js' {
  interface ProgramsServices {
    'accounts.signature': SignatureCheck;
  }
}

/** Where a browser signs in again for a signature, back to `returnTo` (a console page). */
export const reauthenticateUrl = (returnTo: string): string => `${OIDC_PREFIX}/login?purpose=reauthenticate&returnTo=${encodeURIComponent(returnTo)}`;

/** The check with `maxAgeSec` (undefined: no sign-in through a provider, nothing to check). */
export function signatureCheck(maxAgeSec: number | undefined, now: () => number): SignatureCheck {
  return {
    requireRecentSignIn(principal) {
      const provider = principal.identityProvider;
      if (maxAgeSec === undefined || !provider) return;
      const age = provider.authTime === null ? null : Math.max(0, Math.floor((now() - provider.authTime) / 1000));
      if (age !== null && age <= maxAgeSec) return;
      throw new ProblemError(
        'reauthentication-required',
        `an approval is an electronic signature: sign in again through the identity provider (your last sign-in there was ${age === null ? 'at a time the provider did not say' : `${age} s ago`}; at most ${maxAgeSec} s are accepted)`,
        { extensions: { signInUrl: reauthenticateUrl('/#/approvals'), maxAgeSec } },
      );
    },
  };
}
