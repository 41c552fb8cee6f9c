/**
 * The cloud role's own part of the configuration (the `cloud` section): its
 * listener (host, port, its own `tls` pair), the topic prefix every plugin of the relay uses, and the browser
 * origins every route of the listener accepts. The plugins declare the rest
 * of the section: the broker (plugins/cloud-broker) and /mcp
 * (plugins/cloud-mcp).
 */
import { z } from 'zod';
import { DEFAULT_CLOUD_PORT } from '../../../config/schema.js';
import { DEFAULT_TOPIC_PREFIX } from '../../cloud-wire/protocol.js';
import { readPart, type ConfigPart, type PartSettings } from '../../config/config-parts.js';
import { rateLimitsField } from '../../http/rate-limit.js';
import { tlsFilesSchema } from '../../http/tls.js';

export const CLOUD_ROLE_FIELDS = {
  host: z.string().default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_CLOUD_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise (core/http/tls.ts `roleTlsFiles`). */
  tls: tlsFilesSchema.optional(),
  /** Request limits of /mcp and /admin (core/http/rate-limit.ts); on unless `enabled: false`. */
  rateLimits: rateLimitsField(),
  topicPrefix: z.string().min(1).max(64).regex(/^[\w./-]+$/, 'letters, digits, _ . / -').default(DEFAULT_TOPIC_PREFIX),
  /** As `mcp.allowedOrigins`, for the cloud's /mcp and /admin. */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /**
   * The PostgreSQL database the gateway tokens and admin keys live in,
   * shared by several cloud instances (postgresql://…); CLOUD_DATABASE_URL
   * wins over it. Without either: cloud.db in the data directory
   * (token-database.ts), which checks it: a bound here would print the
   * value (and its password) in the configuration's error.
   */
  databaseUrl: z.string().optional(),
  /** How often an instance reads the revocations made elsewhere (other instances, the CLI) and ends their gateways' connections. */
  revocationPollMs: z.number().int().min(100).max(4000).default(1000),
};

export const CLOUD_ROLE_PART: ConfigPart<typeof CLOUD_ROLE_FIELDS> = { section: 'cloud', fields: CLOUD_ROLE_FIELDS, env: { CLOUD_PORT: { field: 'port', type: 'port' } } };

export type CloudRoleSettings = PartSettings<typeof CLOUD_ROLE_FIELDS>;

/** The role's settings in a config parsed with its part (or a `cloud` section made for it). */
export function cloudRoleSettings(config: object): CloudRoleSettings {
  return readPart(config, CLOUD_ROLE_PART) as CloudRoleSettings;
}
