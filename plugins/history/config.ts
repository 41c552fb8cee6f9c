/**
 * The history plugin's part of the configuration file (core/config/config-parts.ts):
 * `history.retention`, how long and how many rows of each data class's
 * history are kept (docs/history.md). The rest of the `history` section is
 * the gateway role's (its history writer).
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config/config-parts.js';

/** How long, and how many rows of, one data class's history is kept. 0 means no limit. */
const retentionLimitSchema = z
  .object({
    maxAgeDays: z.number().min(0).max(36_500).default(0),
    maxRows: z.number().int().min(0).default(0),
  })
  .strict();

export const retentionSchema = z
  .object({
    /** How often retention runs, seconds. */
    intervalSec: z.number().int().min(10).max(86_400).default(3600),
    /** Limits for every class without its own entry. */
    default: retentionLimitSchema.default({ maxAgeDays: 365, maxRows: 0 }),
    /** Limits per data class, e.g. { "Heartbeat": { "maxAgeDays": 30 } }. */
    classes: z.record(z.string().min(1), retentionLimitSchema).default({ Heartbeat: { maxAgeDays: 30, maxRows: 0 }, Motion: { maxAgeDays: 30, maxRows: 0 } }),
  })
  .strict();
export type RetentionConfig = z.output<typeof retentionSchema>;

export const HISTORY_FIELDS = {
  retention: retentionSchema.default(retentionSchema.parse({})),
};

export const HISTORY_CONFIG = { section: 'history', fields: HISTORY_FIELDS } satisfies ConfigPart;
