/**
 * The gateways plugin's part of the configuration (core/config/config-parts.ts):
 * `programs.gatewaySync`, how often the remote gateways' machines and groups
 * are read again (docs/programs-fleet.md, "Keeping in step"), and
 * `programs.adoptGateway`, the fleet entry the gateway in this process takes
 * over as its own (docs/programs-fleet.md, "The gateway in each instance");
 * PROGRAMS_ADOPT_GATEWAY overrides it.
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config/config-parts.js';
import { idOf } from '../../core/rest/ids.js';

export const DEFAULT_GATEWAY_SYNC_INTERVAL_SEC = 300;

export const programsGatewaySyncSchema = z
  .object({
    /** Seconds between syncs of each remote gateway; 0 turns the interval off (a sync on demand still works). */
    intervalSec: z.number().int().min(0).max(86_400).default(DEFAULT_GATEWAY_SYNC_INTERVAL_SEC),
  })
  .strict();

export const GATEWAYS_FIELDS = {
  gatewaySync: programsGatewaySyncSchema.default({ intervalSec: DEFAULT_GATEWAY_SYNC_INTERVAL_SEC }),
  /** The fleet entry (`gw_…`) the gateway in this process takes over as its own; absent unless set. */
  adoptGateway: idOf('gw').optional(),
};

export const GATEWAYS_PART = {
  section: 'programs',
  fields: GATEWAYS_FIELDS,
  env: { PROGRAMS_ADOPT_GATEWAY: { field: 'adoptGateway', type: 'text' } },
} satisfies ConfigPart<typeof GATEWAYS_FIELDS>;
