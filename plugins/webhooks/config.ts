/**
 * The webhooks plugin's part of the configuration (core/config/config-parts.ts):
 * `programs.webhooks`, where deliveries may go (docs/programs-webhooks.md,
 * "Targets"); PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS overrides it.
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config/config-parts.js';

export const programsWebhooksSchema = z
  .object({
    /** Also deliver to private, unique-local, carrier-grade NAT and loopback addresses (receivers inside the plant). */
    allowPrivateNetworks: z.boolean().default(false),
  })
  .strict();
export type ProgramsWebhookSettings = z.output<typeof programsWebhooksSchema>;

export const WEBHOOKS_FIELDS = {
  webhooks: programsWebhooksSchema.default({ allowPrivateNetworks: false }),
};

export const WEBHOOKS_PART = {
  section: 'programs',
  fields: WEBHOOKS_FIELDS,
  env: { PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: { field: 'webhooks.allowPrivateNetworks', type: 'boolean' } },
} satisfies ConfigPart<typeof WEBHOOKS_FIELDS>;
