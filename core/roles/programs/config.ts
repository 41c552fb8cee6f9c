/**
 * The program version service's part of the configuration file
 * (core/config-parts.ts): its listener (`programs.host`, `.port`, `.tls`) and where
 * its webhooks may deliver (`programs.webhooks`). The data directory and
 * the time zone are the runtime's (`dataDir`, `timeZone`).
 */
import { z } from 'zod';
import { readPart, type ConfigPart } from '../../config-parts.js';
import { rateLimitsField } from '../../rate-limit.js';
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

const PROGRAMS_FIELDS = {
  host: z.string().default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_PROGRAMS_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise (core/tls.ts `roleTlsFiles`). */
  tls: tlsFilesSchema.optional(),
  /** Request limits of /api/v1 and the console (core/rate-limit.ts); on unless `enabled: false`. */
  rateLimits: rateLimitsField(),
  webhooks: programsWebhooksSchema.default({ allowPrivateNetworks: false }),
};

export const PROGRAMS_SECTION = {
  section: 'programs',
  fields: PROGRAMS_FIELDS,
  env: {
    PROGRAMS_PORT: { field: 'port', type: 'port' },
    PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: { field: 'webhooks.allowPrivateNetworks', type: 'boolean' },
  },
} satisfies ConfigPart;

/** Every part of the programs role, for its definition. */
export const PROGRAMS_CONFIG: readonly ConfigPart[] = [PROGRAMS_SECTION];

/** The `programs` section of a parsed config (its defaults for one parsed without the part). */
export function programsSettings(config: object | undefined) {
  return readPart(config, PROGRAMS_SECTION);
}
