/**
 * The program version service's part of the configuration file
 * (core/config-parts.ts): its listener (`programs.host`, `.port`, `.tls`), its
 * database (`programs.databaseUrl`: PostgreSQL; `programs.db` in the data
 * directory without it) and where its webhooks may deliver (`programs.webhooks`). The data directory and
 * the time zone are the runtime's (`dataDir`, `timeZone`).
 */
import { z } from 'zod';
import { readPart, type ConfigPart } from '../../config-parts.js';
import { rateLimitsField } from '../../rate-limit.js';
import { idOf } from '../../rest/ids.js';
import { tlsFilesSchema } from '../../tls.js';

/** The program version service's port (its /api/v1, /api/docs and /openapi/v1.json). */
export const DEFAULT_PROGRAMS_PORT = 8030;

/** Where the program service's webhooks may deliver (docs/programs-webhooks.md, "Targets"). */
export const programsWebhooksSchema = z
  .object({
    /** Also deliver to private, unique-local, carrier-grade NAT and loopback addresses (receivers inside the plant). */
    allowPrivateNetworks: z.boolean().default(false),
  })
  .strict();
export type ProgramsWebhookSettings = z.output<typeof programsWebhooksSchema>;

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
/** How often the service reads its remote gateways' machines and groups again (docs/programs-fleet.md, "Keeping in step"). */
export const DEFAULT_GATEWAY_SYNC_INTERVAL_SEC = 300;

export const programsGatewaySyncSchema = z
  .object({
    /** Seconds between syncs of each remote gateway; 0 turns the interval off (a sync on demand still works). */
    intervalSec: z.number().int().min(0).max(86_400).default(DEFAULT_GATEWAY_SYNC_INTERVAL_SEC),
  })
  .strict();
export type ProgramsGatewaySyncSettings = z.output<typeof programsGatewaySyncSchema>;

/** How long an instance's lease on the deployments and trials it drives lasts without renewal (docs/programs-deployments.md, "Several instances"). */
export const DEFAULT_DEPLOYMENT_LEASE_SEC = 30;

export const programsDeploymentsSchema = z
  .object({
    /** Seconds a lease on a deployment or trial lasts unless renewed (renewed at least every third of it): another instance takes a dead one's work over within it plus a second. */
    leaseSec: z.number().int().min(2).max(3600).default(DEFAULT_DEPLOYMENT_LEASE_SEC),
  })
  .strict();
export type ProgramsDeploymentSettings = z.output<typeof programsDeploymentsSchema>;

const PROGRAMS_FIELDS = {
  host: z.string().default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_PROGRAMS_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise (core/tls.ts `roleTlsFiles`). */
  tls: tlsFilesSchema.optional(),
  /** Request limits of /api/v1 and the console (core/rate-limit.ts); on unless `enabled: false`. */
  rateLimits: rateLimitsField(),
  webhooks: programsWebhooksSchema.default({ allowPrivateNetworks: false }),
  /** The service's database on PostgreSQL, for several instances on one database (docs/operations.md); `programs.db` in the data directory without it. */
  databaseUrl: databaseUrlSchema.optional(),
  gatewaySync: programsGatewaySyncSchema.default({ intervalSec: DEFAULT_GATEWAY_SYNC_INTERVAL_SEC }),
  deployments: programsDeploymentsSchema.default({ leaseSec: DEFAULT_DEPLOYMENT_LEASE_SEC }),
  /** The fleet entry (`gw_…`) the gateway in this process takes over as its own (docs/programs-fleet.md, "The gateway in each instance"). */
  adoptGateway: idOf('gw').optional(),
};

export const PROGRAMS_SECTION = {
  section: 'programs',
  fields: PROGRAMS_FIELDS,
  env: {
    PROGRAMS_PORT: { field: 'port', type: 'port' },
    PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: { field: 'webhooks.allowPrivateNetworks', type: 'boolean' },
    PROGRAMS_DATABASE_URL: { field: 'databaseUrl', type: 'text' },
    PROGRAMS_ADOPT_GATEWAY: { field: 'adoptGateway', type: 'text' },
  },
} satisfies ConfigPart;

/** Every part of the programs role, for its definition. */
export const PROGRAMS_CONFIG: readonly ConfigPart[] = [PROGRAMS_SECTION];

/** The `programs` section of a parsed config (its defaults for one parsed without the part). */
export function programsSettings(config: object | undefined) {
  return readPart(config, PROGRAMS_SECTION);
}
