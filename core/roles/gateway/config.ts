/**
 * The gateway role's parts of the configuration file (core/config/config-parts.ts):
 * its name and alias (`gateway`), its listener (`communication.host`,
 * `.port`, `.tls`), the history writer's rhythm (`history.flushRows`,
 * `.flushIntervalMs`, `.heartbeatSec`, `.motion`), and the fleet the file names
 * (`machines`, `groups`, each ID once and a group's members machines of the
 * file). The wing reads them (`readPart`) and puts what plugins need on the
 * context: `identity`, `heartbeatMs`.
 */
import { z } from 'zod';
import { readPart, type ConfigPart } from '../../config/config-parts.js';
import { rateLimitsField } from '../../http/rate-limit.js';
import { tlsFilesSchema } from '../../http/tls.js';
import { groupConfigSchema, machineConfigSchema, type GroupConfig, type MachineConfig } from './machine-config.js';

/** The gateway's port (/api, /mcp and the console). */
export const DEFAULT_GATEWAY_PORT = 8080;

const IDENTITY_FIELDS = {
  name: z.string().min(1).default('gateway'),
  alias: z.string().default(''),
};

const LISTENER_FIELDS = {
  host: z.string().default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_GATEWAY_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise (core/http/tls.ts `roleTlsFiles`). */
  tls: tlsFilesSchema.optional(),
  /** Request limits of /api, /mcp and the console (core/http/rate-limit.ts); on unless `enabled: false`. */
  rateLimits: rateLimitsField(),
};

/** Whether the status sample reads the axes, spindle and tool (core/roles/gateway/fleet/motion.ts), and how often a changed reading is recorded. */
const motionRecordingSchema = z
  .object({
    enabled: z.boolean().default(true),
    minIntervalMs: z.number().int().min(0).max(86_400_000).default(0),
  })
  .strict();

const HISTORY_WRITER_FIELDS = {
  flushRows: z.number().int().min(1).max(5000).default(500),
  flushIntervalMs: z.number().int().min(10).max(1000).default(750),
  heartbeatSec: z.number().int().min(1).default(60),
  motion: motionRecordingSchema.default({ enabled: true, minIntervalMs: 0 }),
};

/** The motion part of the history section. */
export type MotionRecording = z.output<typeof motionRecordingSchema>;

/** The rules across `machines` and `groups`: each ID once, and a group's members are machines the file lists. */
function checkFleetEntries(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const machines = config.machines as readonly MachineConfig[];
  const seen = new Set<string>();
  machines.forEach((m, i) => {
    if (seen.has(m.machineID)) ctx.addIssue({ code: 'custom', path: ['machines', i, 'machineID'], input: m.machineID, message: `duplicate machineID '${m.machineID}'` });
    seen.add(m.machineID);
  });
  const groups = new Set<string>();
  (config.groups as readonly GroupConfig[]).forEach((g, i) => {
    if (groups.has(g.groupID)) ctx.addIssue({ code: 'custom', path: ['groups', i, 'groupID'], input: g.groupID, message: `duplicate groupID '${g.groupID}'` });
    groups.add(g.groupID);
    g.machineIDs.forEach((id, j) => {
      if (!seen.has(id)) ctx.addIssue({ code: 'custom', path: ['groups', i, 'machineIDs', j], input: id, message: `unknown machineID '${id}'; accepted: machineIDs listed under machines` });
    });
  });
}

export const GATEWAY_IDENTITY = { section: 'gateway', fields: IDENTITY_FIELDS } satisfies ConfigPart;
export const GATEWAY_LISTENER = { section: 'communication', fields: LISTENER_FIELDS, env: { GATEWAY_PORT: { field: 'port', type: 'port' } } } satisfies ConfigPart;
export const GATEWAY_HISTORY_WRITER = { section: 'history', fields: HISTORY_WRITER_FIELDS } satisfies ConfigPart;
export const GATEWAY_MACHINES = { section: 'machines', schema: z.array(machineConfigSchema).default([]) } satisfies ConfigPart;
export const GATEWAY_GROUPS = { section: 'groups', schema: z.array(groupConfigSchema).default([]), check: checkFleetEntries } satisfies ConfigPart;

/** Every part of the gateway role, for its definition. */
export const GATEWAY_CONFIG: readonly ConfigPart[] = [GATEWAY_IDENTITY, GATEWAY_LISTENER, GATEWAY_HISTORY_WRITER, GATEWAY_MACHINES, GATEWAY_GROUPS];

/** The gateway role's settings in a parsed config (its parts' defaults for one parsed without them). */
export function gatewaySettings(config: object | undefined) {
  return {
    identity: readPart(config, GATEWAY_IDENTITY),
    listener: readPart(config, GATEWAY_LISTENER),
    historyWriter: readPart(config, GATEWAY_HISTORY_WRITER),
    machines: readPart(config, GATEWAY_MACHINES),
    groups: readPart(config, GATEWAY_GROUPS),
  };
}
export type GatewaySettings = ReturnType<typeof gatewaySettings>;
