/**
 * The settings of sign-in through an OpenID Connect provider, as each
 * console role declares them in its own section (`security.oidc` for the
 * gateway, `programs.oidc` for the program service): the provider and the
 * client, what the login page calls it, and which claim values map to which
 * of the role's roles. Each role adds its own mapping fields (the gateway's
 * authorised APIs, the program service's library and machine-group scopes).
 *
 * The provider and the client may instead come from `OIDC_ISSUER`,
 * `OIDC_CLIENT_ID` and `OIDC_CLIENT_SECRET`, shared by both consoles (one
 * client registered for both); the file's own value wins where it gives one,
 * so a console with a client of its own says so in its section.
 */
import { z } from 'zod';

/** The environment variables both consoles read for the provider and the client. */
export const OIDC_ENV = { issuer: 'OIDC_ISSUER', clientId: 'OIDC_CLIENT_ID', clientSecret: 'OIDC_CLIENT_SECRET' } as const;

export const DEFAULT_OIDC_SCOPES = 'openid profile email groups';
export const DEFAULT_ROLES_CLAIM = 'groups';
export const DEFAULT_USERNAME_CLAIM = 'preferred_username';

/** A claim's name, or a dotted path into the claims (`realm_access.roles` for Keycloak's realm roles). */
const claimName = z.string().regex(/^[A-Za-z0-9_:$-]+(\.[A-Za-z0-9_:$-]+)*$/, 'a claim name, or a dotted path such as realm_access.roles').max(128);
/** A claim value as the provider sends it (a group's name or object id, a role). */
export const claimValueKey = z.string().min(1).max(256);

const httpUrl = z.string().max(2048).refine((text) => {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}, 'an http(s) URL without credentials, query or fragment');

/** The fields every console's `oidc` section has; `roles` maps claim values to one of `roleNames`. */
export function oidcCommonFields<R extends readonly [string, ...string[]]>(roleNames: R) {
  return {
    /** The issuer URL, exactly as the provider's metadata says it; OIDC_ISSUER when absent. */
    issuer: httpUrl.optional(),
    /** The client registered for this console; OIDC_CLIENT_ID when absent. */
    clientId: z.string().min(1).max(256).optional(),
    /** The client's secret; OIDC_CLIENT_SECRET when absent; neither: a public client (PKCE only). */
    clientSecret: z.string().min(1).max(1024).optional(),
    /** The scopes asked for, space-separated; must contain openid. */
    scopes: z.string().max(1024).regex(/(^| )openid( |$)/, 'must contain openid').default(DEFAULT_OIDC_SCOPES),
    /** The provider's name on the login page ("Sign in with …"); the issuer's host when absent. */
    displayName: z.string().min(1).max(64).optional(),
    /** The URL people reach this console at (its redirect URI is `<publicUrl>/auth/oidc/callback`); the request's own origin when absent. */
    publicUrl: httpUrl.optional(),
    /** The claim a user's name is read from (then `email`, then `sub`). */
    usernameClaim: claimName.default(DEFAULT_USERNAME_CLAIM),
    /** The claim whose values map to roles. */
    rolesClaim: claimName.default(DEFAULT_ROLES_CLAIM),
    /** Claim value → role; the first entry (in the file's order) whose value the user has decides. */
    roles: z.record(claimValueKey, z.enum(roleNames)).default({}),
  };
}

/** What every console's `oidc` section holds once parsed. */
export interface OidcCommonSettings {
  issuer?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  scopes: string;
  displayName?: string | undefined;
  publicUrl?: string | undefined;
  usernameClaim: string;
  rolesClaim: string;
  roles: Record<string, string>;
}

/** The provider and client of a console, with the environment applied and checked. */
export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  /** Undefined: a public client. Never logged, never sent anywhere but the provider's token endpoint. */
  clientSecret: string | undefined;
  scopes: string;
  displayName: string;
  /** Without a trailing slash; undefined: the request's origin. */
  publicUrl: string | undefined;
}

/** A mistake in a console's `oidc` settings, named by its path (or the variable that should give it). */
export class OidcSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OidcSettingsError';
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Plain HTTP is accepted for a provider on this host only (a test or a provider beside the service), never across a network. */
export function insecureIssuerAllowed(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * The provider and client of the `oidc` settings at `path` (`security.oidc`),
 * the environment filling what the file leaves out; throws naming the path
 * and the variable for a value neither gives, or an issuer on plain HTTP
 * across a network.
 */
export function resolveOidcClient(settings: OidcCommonSettings, env: NodeJS.ProcessEnv, path: string): OidcClientSettings {
  const fromEnv = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const issuer = settings.issuer ?? fromEnv(OIDC_ENV.issuer);
  const clientId = settings.clientId ?? fromEnv(OIDC_ENV.clientId);
  if (!issuer) throw new OidcSettingsError(`${path}.issuer: not given, and ${OIDC_ENV.issuer} is not set; give the provider's issuer URL`);
  if (!clientId) throw new OidcSettingsError(`${path}.clientId: not given, and ${OIDC_ENV.clientId} is not set; give the client id registered for this console`);
  const where = settings.issuer ? `${path}.issuer` : OIDC_ENV.issuer;
  if (!httpUrl.safeParse(issuer).success) throw new OidcSettingsError(`${where}: found ${JSON.stringify(issuer.slice(0, 200))}; expected an https URL`);
  if (new URL(issuer).protocol !== 'https:' && !insecureIssuerAllowed(issuer)) {
    throw new OidcSettingsError(`${where}: ${issuer} is plain HTTP; expected https (plain HTTP is accepted only for a provider on this host: 127.0.0.1, localhost, [::1])`);
  }
  return {
    issuer,
    clientId,
    clientSecret: settings.clientSecret ?? fromEnv(OIDC_ENV.clientSecret),
    scopes: settings.scopes,
    displayName: settings.displayName ?? new URL(issuer).host,
    publicUrl: settings.publicUrl?.replace(/\/+$/, ''),
  };
}
