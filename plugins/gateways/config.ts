/**
 * The gateways plugin's part of the configuration (core/config-parts.ts):
 * `programs.gatewaySync`, how often the remote gateways' machines and groups
 * are read again (docs/programs-fleet.md, "Keeping in step").
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config-parts.js';

export const DEFAULT_GATEWAY_SYNC_INTERVAL_SEC = 300;

export const programsGatewaySyncSchema = z
  .object({
    /** Seconds between syncs of each remote gateway; 0 turns the interval off (a sync on demand still works). */
    intervalSec: z.number().int().min(0).max(86_400).default(DEFAULT_GATEWAY_SYNC_INTERVAL_SEC),
  })
  .strict();

export const GATEWAYS_FIELDS = {
  gatewaySync: programsGatewaySyncSchema.default({ intervalSec: DEFAULT_GATEWAY_SYNC_INTERVAL_SEC }),
};

export const GATEWAYS_PART = { section: 'programs', fields: GATEWAYS_FIELDS } satisfies ConfigPart<typeof GATEWAYS_FIELDS>;
