/** What the fleet's operations answer: gateways, machines, groups, sync reports and files. */
import { z } from 'zod';
import { iso, isoOrNull } from '../../../core/rest/fields.js';
import type { GatewayRecord, GroupRecord } from '../store.js';

/** Names listed per kind in a sync report (and its audit record); the rest are counted. */
export const REPORT_MAX_NAMES = 100;

export const gatewayView = z.object({
  id: z.string(), name: z.string(),
  kind: z.enum(['in-process', 'http']).describe('`in-process`: the gateway in the process of a program-service instance (`npm start`); `http`: a remote gateway.'),
  url: z.string().describe('A remote gateway\'s base URL. For an in-process gateway `in-process`, or the address the other instances reach it at once one is registered (PATCH).'),
  gatewayID: z.string().nullable().describe('An in-process gateway\'s own identity (its gateway-info gatewayID); null for a remote gateway, and for an in-process one no instance has taken over since it was registered without it.'),
  host: z.string().nullable().describe('The host of the instance an in-process gateway runs in.'),
  createdBy: z.string(), createdAt: z.string(),
  reachable: z.boolean().describe('The last call to it succeeded.'), lastContactAt: z.string().nullable(), lastError: z.string().nullable(), lastErrorAt: z.string().nullable(),
  lastSyncAt: z.string().nullable(),
});
export const machineRecordView = z.object({
  id: z.string(), gatewayId: z.string(), machineId: z.string().describe('The machine\'s ID on its gateway.'), name: z.string(), driver: z.string(), system: z.string(), model: z.string(),
  machineType: z.string(), activeOnGateway: z.boolean(), present: z.boolean().describe('False once its gateway no longer lists it; kept for deployments and the audit.'),
  groupIds: z.array(z.string()), programDir: z.string(), transformProfile: z.string().nullable(),
  mirror: z.object({ enabled: z.boolean(), intervalSec: z.number().int() }), createdAt: z.string(), updatedAt: z.string(),
});
export const groupView = z.object({
  id: z.string(), name: z.string(), description: z.string(), source: z.enum(['gateway', 'service']), gatewayId: z.string().nullable(), gatewayGroupId: z.string().nullable(),
  machineIds: z.array(z.string()), createdAt: z.string(), updatedAt: z.string(),
});
const namesReport = z.object({ names: z.array(z.string()), count: z.number().int() });
export const syncReport = z.object({
  gatewayId: z.string(),
  machines: z.object({ added: namesReport, changed: z.array(z.object({ machineId: z.string(), fields: z.array(z.string()) })), gone: namesReport, returned: namesReport, unchanged: z.number().int() }),
  groups: z.object({ added: namesReport, changed: namesReport, gone: namesReport }),
  syncedAt: z.string(),
});
export type SyncReport = z.infer<typeof syncReport>;
export const fileView = z.object({ dir: z.string(), name: z.string(), size: z.number(), modified: z.string().optional(), comment: z.string().optional() });

export const gatewayOut = (g: GatewayRecord): z.infer<typeof gatewayView> => ({
  id: g.id, name: g.name, kind: g.kind, url: g.url, gatewayID: g.gatewayUid, host: g.host, createdBy: g.createdBy, createdAt: iso(g.createdAt),
  reachable: g.lastContactAt !== null && (g.lastErrorAt === null || g.lastErrorAt < g.lastContactAt), lastContactAt: isoOrNull(g.lastContactAt), lastError: g.lastError,
  lastErrorAt: isoOrNull(g.lastErrorAt), lastSyncAt: isoOrNull(g.lastSyncAt),
});
export const groupOut = (g: GroupRecord): z.infer<typeof groupView> => ({
  id: g.id, name: g.name, description: g.description, source: g.gatewayId ? 'gateway' : 'service', gatewayId: g.gatewayId, gatewayGroupId: g.gatewayGroupId,
  machineIds: g.machineIds, createdAt: iso(g.createdAt), updatedAt: iso(g.updatedAt),
});
/** The first names of a list, and how many it has. */
export const names = (list: string[]) => ({ names: list.slice(0, REPORT_MAX_NAMES), count: list.length });
