/**
 * The auth plugin's parts of the configuration file (core/config/config-parts.ts):
 * security control (`security.securityControl`) and the IP white list
 * (`communication.enableIpWhiteList`, `communication.ipWhiteList`). They
 * seed the stored security settings, and replace them at every start where
 * the file writes them (./config-settings.ts). Sign-in through an OpenID
 * Connect provider (`security.oidc`, ./sso/config.ts) is read from the file
 * only: it is never stored, so its client secret stays out of the database.
 */
import { z } from 'zod';
import { readPart, type ConfigPart } from '../../core/config/config-parts.js';
import type { SecuritySettings } from './user-store.js';
import { gatewayOidcSchema } from './sso/config.js';

const SECURITY_FIELDS = {
  securityControl: z.boolean().default(true),
};

const WHITE_LIST_FIELDS = {
  enableIpWhiteList: z.boolean().default(false),
  ipWhiteList: z.array(z.string()).default([]),
};

const SSO_FIELDS = {
  oidc: gatewayOidcSchema.optional(),
};

/** The fields of the parts together: the plugin's `settings`. */
export type AuthFields = typeof SECURITY_FIELDS & typeof WHITE_LIST_FIELDS & typeof SSO_FIELDS;

const SECURITY_PART = { section: 'security', fields: SECURITY_FIELDS } satisfies ConfigPart;
const WHITE_LIST_PART = { section: 'communication', fields: WHITE_LIST_FIELDS } satisfies ConfigPart;
const SSO_PART = { section: 'security', fields: SSO_FIELDS } satisfies ConfigPart;

export const AUTH_CONFIG: readonly ConfigPart[] = [SECURITY_PART, WHITE_LIST_PART, SSO_PART];

/** Each setting with the config path that writes it. */
export const SETTING_PATHS: Readonly<Record<keyof SecuritySettings, string>> = {
  securityControl: 'security.securityControl',
  enableIpWhiteList: 'communication.enableIpWhiteList',
  ipWhiteList: 'communication.ipWhiteList',
};

/** The security settings a parsed config gives (their defaults where it gives none), as the plugin's `settings` are, without sign-in through a provider (never stored). */
export function authSettings(config: object | undefined): SecuritySettings {
  return { ...readPart(config, SECURITY_PART), ...readPart(config, WHITE_LIST_PART) };
}
