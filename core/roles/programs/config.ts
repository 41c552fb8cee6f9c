/**
 * The program version service's part of the configuration file
 * (core/config/config-parts.ts): its listener (`programs.host`, `.port`, `.tls`,
 * `.rateLimits`) and its database (`programs.databaseUrl`: PostgreSQL;
 * `programs.db` in the data directory without it). The plugins declare
 * their own fields of the section, as the gateway's do (`programs.webhooks`:
 * plugins/webhooks/config.ts, `.gatewaySync`: plugins/gateways/config.ts,
 * `.deployments`: plugins/deployments/config.ts). The data directory and the
 * time zone are the runtime's (`dataDir`, `timeZone`).
 */
import { z } from 'zod';
import { readPart, type ConfigPart } from '../../config/config-parts.js';
import { rateLimitsField } from '../../http/rate-limit.js';
import { tlsFilesSchema } from '../../http/tls.js';

/** The program version service's port (its /api/v1, /api/docs and /openapi/v1.json). */
export const DEFAULT_PROGRAMS_PORT = 8030;

/** A PostgreSQL connection string (`postgres://` or `postgresql://`); a mistake is named by its scheme only, never the password. */
export const databaseUrlSchema = z.string().superRefine((url, ctx) => {
  let scheme: string | undefined;
  try {
    scheme = new URL(url).protocol;
  } catch {
    // not a URL: reported below
  }
  if (scheme === 'postgres:' || scheme === 'postgresql:') return;
  // Only the scheme is shown: the rest may hold a password, wherever a mistyped string put it.
  const shown = scheme ? `${scheme}… (the rest not shown)` : '(not a URL; not shown, as it may hold a password)';
  ctx.addIssue({ code: 'custom', input: shown, message: 'expected a PostgreSQL connection string, postgresql://user:password@host:port/database' });
});

const PROGRAMS_FIELDS = {
  host: z.string().default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_PROGRAMS_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise (core/http/tls.ts `roleTlsFiles`). */
  tls: tlsFilesSchema.optional(),
  /** Request limits of /api/v1 and the console (core/http/rate-limit.ts); on unless `enabled: false`. */
  rateLimits: rateLimitsField(),
  /** The service's database on PostgreSQL, for several instances on one database (docs/operations.md); `programs.db` in the data directory without it. */
  databaseUrl: databaseUrlSchema.optional(),
};

export const PROGRAMS_SECTION = {
  section: 'programs',
  fields: PROGRAMS_FIELDS,
  env: {
    PROGRAMS_PORT: { field: 'port', type: 'port' },
    PROGRAMS_DATABASE_URL: { field: 'databaseUrl', type: 'text' },
  },
} satisfies ConfigPart;

/** Every part of the programs role, for its definition. */
export const PROGRAMS_CONFIG: readonly ConfigPart[] = [PROGRAMS_SECTION];

/** The `programs` section of a parsed config (its defaults for one parsed without the part). */
export function programsSettings(config: object | undefined) {
  return readPart(config, PROGRAMS_SECTION);
}
