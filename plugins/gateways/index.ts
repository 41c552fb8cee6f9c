/**
 * The program service's fleet: gateways (the local one reached in-process,
 * remote ones over HTTP with a secret key kept sealed), sync of their
 * machines and groups, the service's own settings per machine, machine
 * groups, and the files on a machine. docs/programs-fleet.md.
 */
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { HttpGatewayLink } from '../../core/gateway-link/http.js';
import { GatewayLinkError, type GatewayLink } from '../../core/gateway-link/types.js';
import { CredentialBox, type SealedCredential } from '../../core/store/credential-box.js';
import type { WriteTx } from '../../core/store/database.js';
import type { FleetMachines } from './service.js';
import { FleetRepository, MIGRATIONS, newId, type GatewayRecord, type GroupRecord, type MachineRecord } from './store.js';

/** A new machine's mirror interval until someone sets it. */
const DEFAULT_MIRROR_INTERVAL_SEC = 300;
/** Names listed per kind in a sync report (and its audit record); the rest are counted. */
const REPORT_MAX_NAMES = 100;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{16}$`), `an id such as ${prefix}_0123456789abcdef`);
const idParams = (prefix: string) => z.object({ id: idOf(prefix) });
const nameSchema = z.string().trim().min(1).max(128).regex(/^[^\p{Cc}]+$/u, 'no control characters');

const gatewayView = z.object({
  id: z.string(), name: z.string(), kind: z.enum(['in-process', 'http']), url: z.string(), createdBy: z.string(), createdAt: z.string(),
  reachable: z.boolean().describe('The last call to it succeeded.'), lastContactAt: z.string().nullable(), lastError: z.string().nullable(), lastErrorAt: z.string().nullable(),
  lastSyncAt: z.string().nullable(),
});
const machineView = z.object({
  id: z.string(), gatewayId: z.string(), machineId: z.string().describe('The machine\'s ID on its gateway.'), name: z.string(), driver: z.string(), system: z.string(), model: z.string(),
  machineType: z.string(), activeOnGateway: z.boolean(), present: z.boolean().describe('False once its gateway no longer lists it; kept for deployments and the audit.'),
  groupIds: z.array(z.string()), programDir: z.string(), transformProfile: z.string().nullable(),
  mirror: z.object({ enabled: z.boolean(), intervalSec: z.number().int() }), createdAt: z.string(), updatedAt: z.string(),
});
const groupView = z.object({
  id: z.string(), name: z.string(), description: z.string(), source: z.enum(['gateway', 'service']), gatewayId: z.string().nullable(), gatewayGroupId: z.string().nullable(),
  machineIds: z.array(z.string()), createdAt: z.string(), updatedAt: z.string(),
});
const namesReport = z.object({ names: z.array(z.string()), count: z.number().int() });
const syncReport = z.object({
  gatewayId: z.string(),
  machines: z.object({ added: namesReport, changed: z.array(z.object({ machineId: z.string(), fields: z.array(z.string()) })), gone: namesReport, returned: namesReport, unchanged: z.number().int() }),
  groups: z.object({ added: namesReport, changed: namesReport, gone: namesReport }),
  syncedAt: z.string(),
});
const fileView = z.object({ dir: z.string(), name: z.string(), size: z.number(), modified: z.string().optional(), comment: z.string().optional() });

const gatewayOut = (g: GatewayRecord): z.infer<typeof gatewayView> => ({
  id: g.id, name: g.name, kind: g.kind, url: g.url, createdBy: g.createdBy, createdAt: iso(g.createdAt) as string,
  reachable: g.lastContactAt !== null && (g.lastErrorAt === null || g.lastErrorAt < g.lastContactAt), lastContactAt: iso(g.lastContactAt), lastError: g.lastError,
  lastErrorAt: iso(g.lastErrorAt), lastSyncAt: iso(g.lastSyncAt),
});
const groupOut = (g: GroupRecord): z.infer<typeof groupView> => ({
  id: g.id, name: g.name, description: g.description, source: g.gatewayId ? 'gateway' : 'service', gatewayId: g.gatewayId, gatewayGroupId: g.gatewayGroupId,
  machineIds: g.machineIds, createdAt: iso(g.createdAt) as string, updatedAt: iso(g.updatedAt) as string,
});
const names = (list: string[]) => ({ names: list.slice(0, REPORT_MAX_NAMES), count: list.length });

const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};

/** The fleet operations, and the sync they share with the start-up sync of the local gateway. */
function fleetOperations(ctx: ProgramsContext, repo: FleetRepository, box: CredentialBox): { ops: AnyRestOperation[]; sync: (g: GatewayRecord, p: RestPrincipal | null) => Promise<z.infer<typeof syncReport>>; service: FleetMachines } {
  const audit = (tx: WriteTx, p: RestPrincipal | null, entry: { action: string; entityType: string; entityId: string; machine?: string | null; details?: Record<string, unknown> }) =>
    ctx.audit.append(tx, { principalName: p?.name ?? 'system', onBehalfOf: p?.onBehalfOf ?? null, authMethod: p?.authMethod ?? 'internal', category: 'fleet', ...entry });

  const linkFor = (g: GatewayRecord): GatewayLink => {
    if (g.kind === 'in-process') {
      if (!ctx.localGateway) throw new GatewayLinkError('unreachable', `gateway ${g.name} runs in the same process as this service, which was started without it (--role programs)`);
      return ctx.localGateway;
    }
    return new HttpGatewayLink(g.url, box.open(`gateway:${g.id}`, 'secretKey', JSON.parse(g.sealedKey ?? 'null') as SealedCredential));
  };

  /** Runs a call through a gateway's link, recording contact or error; a link failure becomes a problem a person can act on. */
  const through = async <T>(g: GatewayRecord, call: (link: GatewayLink) => Promise<T>): Promise<T> => {
    try {
      const result = await call(linkFor(g));
      await repo.recordContact(g.id, ctx.now(), null);
      return result;
    } catch (err) {
      if (!(err instanceof GatewayLinkError)) throw err;
      // A gateway that answered (even with a refusal about a file) is reachable.
      const gatewayDown = err.kind === 'unreachable' || err.kind === 'unauthorized';
      await repo.recordContact(g.id, ctx.now(), gatewayDown ? err.message : null);
      const detail = `gateway ${g.name}: ${err.message}`;
      if (err.kind === 'unreachable') throw new ProblemError('service-unavailable', detail, { retryAfterSec: 30, extensions: { gatewayError: err.kind } });
      if (err.kind === 'machine-unavailable') throw new ProblemError('service-unavailable', detail, { retryAfterSec: 10, extensions: { gatewayError: err.kind } });
      if (err.kind === 'not-found') throw new ProblemError('not-found', detail, { extensions: { gatewayError: err.kind } });
      throw new ProblemError('unacceptable', detail, { extensions: { gatewayError: err.kind } });
    }
  };

  /** Machines the caller may see: every one with machine-group scope '*', else members of the groups in scope. */
  const machineVisible = async (p: RestPrincipal, m: MachineRecord): Promise<boolean> => {
    const scope = p.scopes.machineGroups ?? '*';
    if (scope === '*') return true;
    return (await repo.groupIdsOf(m.id)).some((g) => scope.includes(g));
  };
  const visibleMachine = async (p: RestPrincipal, id: string): Promise<MachineRecord> => {
    const m = await repo.machine(id);
    if (!m || !(await machineVisible(p, m))) throw new ProblemError('not-found', `no machine ${id}`);
    return m;
  };
  const groupVisible = (p: RestPrincipal, id: string): boolean => {
    const scope = p.scopes.machineGroups ?? '*';
    return scope === '*' || scope.includes(id);
  };
  const machineOut = async (m: MachineRecord): Promise<z.infer<typeof machineView>> => ({
    id: m.id, gatewayId: m.gatewayId, machineId: m.machineId, name: m.name, driver: m.driver, system: m.system, model: m.model, machineType: m.machineType,
    activeOnGateway: m.activeOnGateway, present: m.present, groupIds: await repo.groupIdsOf(m.id), programDir: m.programDir, transformProfile: m.transformProfile,
    mirror: { enabled: m.mirrorEnabled, intervalSec: m.mirrorIntervalSec }, createdAt: iso(m.createdAt) as string, updatedAt: iso(m.updatedAt) as string,
  });

  const sync = async (g: GatewayRecord, p: RestPrincipal | null): Promise<z.infer<typeof syncReport>> => {
    const [machines, groups] = await through(g, (link) => Promise.all([link.listMachines(), link.listGroups()]));
    const now = ctx.now();
    const existing = new Map((await repo.machinesOf(g.id)).map((m) => [m.machineId, m]));
    const existingGroups = new Map((await repo.groupsOf(g.id)).map((x) => [x.gatewayGroupId ?? '', x]));
    const report = { added: [] as string[], changed: [] as { machineId: string; fields: string[] }[], gone: [] as string[], returned: [] as string[], unchanged: 0 };
    const groupReport = { added: [] as string[], changed: [] as string[], gone: [] as string[] };
    await ctx.db.write(async (tx) => {
      const idByMachineId = new Map<string, string>();
      for (const m of machines) {
        const before = existing.get(m.machineID);
        const fields = { name: m.name, driver: m.driver, system: m.system, model: m.model, machineType: m.machineType, activeOnGateway: m.isActive };
        if (!before) {
          const record: MachineRecord = {
            id: newId('mch'), gatewayId: g.id, machineId: m.machineID, ...fields, present: true, programDir: '', transformProfile: null, mirrorEnabled: false,
            mirrorIntervalSec: DEFAULT_MIRROR_INTERVAL_SEC, createdAt: now, updatedAt: now,
          };
          await repo.upsertMachine(tx, record, true);
          idByMachineId.set(m.machineID, record.id);
          report.added.push(m.machineID);
          continue;
        }
        idByMachineId.set(m.machineID, before.id);
        const changed = (Object.keys(fields) as (keyof typeof fields)[]).filter((k) => before[k] !== fields[k]);
        if (!before.present) report.returned.push(m.machineID);
        if (changed.length || !before.present) {
          await repo.upsertMachine(tx, { ...before, ...fields, present: true, updatedAt: now }, false);
          if (changed.length) report.changed.push({ machineId: m.machineID, fields: changed });
        } else report.unchanged++;
      }
      const listed = new Set(machines.map((m) => m.machineID));
      for (const before of existing.values()) {
        if (listed.has(before.machineId) || !before.present) continue;
        await repo.upsertMachine(tx, { ...before, present: false, updatedAt: now }, false);
        report.gone.push(before.machineId);
      }
      for (const grp of groups) {
        const members = grp.machineIDs.map((id) => idByMachineId.get(id)).filter((id): id is string => id !== undefined).sort();
        const before = existingGroups.get(grp.groupID);
        if (!before) {
          await repo.saveGroup(tx, { id: newId('grp'), name: grp.name, gatewayId: g.id, gatewayGroupId: grp.groupID, description: '', machineIds: members, createdAt: now, updatedAt: now }, true);
          groupReport.added.push(grp.groupID);
        } else if (before.name !== grp.name || before.machineIds.join() !== members.join()) {
          await repo.saveGroup(tx, { ...before, name: grp.name, machineIds: members, updatedAt: now }, false);
          groupReport.changed.push(grp.groupID);
        }
      }
      const listedGroups = new Set(groups.map((x) => x.groupID));
      for (const before of existingGroups.values()) {
        // A group its gateway no longer has keeps its id (scopes may name it) but no members.
        if (listedGroups.has(before.gatewayGroupId ?? '') || before.machineIds.length === 0) continue;
        await repo.saveGroup(tx, { ...before, machineIds: [], updatedAt: now }, false);
        groupReport.gone.push(before.gatewayGroupId ?? before.id);
      }
      await repo.setSynced(tx, g.id, now);
      await audit(tx, p, {
        action: 'gateway.sync', entityType: 'gateway', entityId: g.id,
        details: {
          added: report.added.slice(0, REPORT_MAX_NAMES), changed: report.changed.slice(0, REPORT_MAX_NAMES).map((c) => c.machineId), gone: report.gone.slice(0, REPORT_MAX_NAMES),
          returned: report.returned.slice(0, REPORT_MAX_NAMES), unchanged: report.unchanged, groups: groupReport,
        },
      });
    }, { transaction: true });
    return {
      gatewayId: g.id,
      machines: { added: names(report.added), changed: report.changed.slice(0, REPORT_MAX_NAMES), gone: names(report.gone), returned: names(report.returned), unchanged: report.unchanged },
      groups: { added: names(groupReport.added), changed: names(groupReport.changed), gone: names(groupReport.gone) },
      syncedAt: iso(now) as string,
    };
  };

  const ops = [
    defineOperation({
      operationId: 'registerGateway', method: 'POST', path: '/gateways', summary: 'Register a remote gateway: its URL and a secret key of a user on it (kept sealed, never returned)', tags: ['fleet'], permission: 'fleet.manage',
      body: z.object({
        name: nameSchema,
        url: z.string().max(512).regex(/^https?:\/\/[^\s/?#]+(?::\d+)?\/?$/, 'an http:// or https:// base URL such as http://10.0.4.7:8080'),
        secretKey: z.string().min(16).max(256).regex(/^[\x21-\x7e]+$/, 'the key as the gateway showed it'),
      }).strict(),
      responses: { 201: { description: 'Registered; `reachable` says whether a first call succeeded.', schema: gatewayView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        if (await repo.gatewayByName(body.name)) throw new ProblemError('conflict', `a gateway named ${body.name} is registered`, { errors: [{ field: 'body.name', message: 'already taken' }] });
        const id = newId('gw');
        const record: GatewayRecord = {
          id, name: body.name, kind: 'http', url: body.url.replace(/\/+$/, ''), sealedKey: JSON.stringify(box.seal(`gateway:${id}`, 'secretKey', body.secretKey)),
          createdBy: p.name, createdAt: ctx.now(), lastContactAt: null, lastError: null, lastErrorAt: null, lastSyncAt: null,
        };
        await ctx.db.write(async (tx) => {
          await repo.insertGateway(tx, record);
          await audit(tx, p, { action: 'gateway.register', entityType: 'gateway', entityId: id, details: { name: record.name, url: record.url } });
        }, { transaction: true });
        await through(record, (link) => link.listMachines()).catch(() => undefined);
        return { status: 201, body: gatewayOut((await repo.gateway(id)) as GatewayRecord), headers: { location: `/api/v1/gateways/${id}` } };
      },
    }),
    defineOperation({
      operationId: 'listGateways', method: 'GET', path: '/gateways', summary: 'Gateways with their reachability', tags: ['fleet'], permission: 'fleet.read',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of gateways, by id.', schema: pageOf(gatewayView) } },
      handler: async ({ query }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const result = pageAfter(await repo.listGateways(query.limit + 1, after), query.limit, (g) => ({ id: g.id }));
        return { status: 200, body: { items: result.items.map(gatewayOut), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getGateway', method: 'GET', path: '/gateways/{id}', summary: 'One gateway', tags: ['fleet'], permission: 'fleet.read',
      params: idParams('gw'), responses: { 200: { description: 'The gateway.', schema: gatewayView } },
      handler: async ({ params }) => {
        const g = await repo.gateway(params.id);
        if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
        return { status: 200, body: gatewayOut(g) };
      },
    }),
    defineOperation({
      operationId: 'syncGateway', method: 'POST', path: '/gateways/{id}/sync', summary: 'Read the gateway\'s machines and groups; say what was added, changed and gone', tags: ['fleet'], permission: 'fleet.manage',
      params: idParams('gw'), responses: { 200: { description: 'What the sync changed. Machines that left are kept with present=false.', schema: syncReport } },
      handler: async ({ params }, { principal }) => {
        const g = await repo.gateway(params.id);
        if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
        return { status: 200, body: await sync(g, principalOf(principal)) };
      },
    }),
    defineOperation({
      operationId: 'listMachines', method: 'GET', path: '/machines', summary: 'Machines in your scope', tags: ['fleet'], permission: 'fleet.read',
      query: z.object({ ...pageQueryShape, gatewayId: idOf('gw').optional() }),
      responses: { 200: { description: 'A page of machines, by id.', schema: pageOf(machineView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await repo.listMachines(query.gatewayId, query.limit + 1, after);
        const result = pageAfter(rows, query.limit, (m) => ({ id: m.id }));
        const visible: MachineRecord[] = [];
        for (const m of result.items) if (await machineVisible(p, m)) visible.push(m);
        return { status: 200, body: { items: await Promise.all(visible.map(machineOut)), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getMachine', method: 'GET', path: '/machines/{id}', summary: 'One machine with the service\'s settings for it', tags: ['fleet'], permission: 'fleet.read',
      params: idParams('mch'), responses: { 200: { description: 'The machine.', schema: machineView } },
      handler: async ({ params }, { principal }) => ({ status: 200, body: await machineOut(await visibleMachine(principalOf(principal), params.id)) }),
    }),
    defineOperation({
      operationId: 'updateMachine', method: 'PATCH', path: '/machines/{id}', summary: 'The service\'s settings for a machine: program directory, transform profile, mirror', tags: ['fleet'], permission: 'fleet.manage',
      params: idParams('mch'),
      body: z.object({
        programDir: z.string().max(1024).regex(/^[^\p{Cc}]*$/u, 'no control characters').refine((d) => !d.split(/[\\/]/).includes('..'), "no '..' segments").optional()
          .describe('Directory on the controller programs go to, e.g. //CNC_MEM/USER/PATH1/; empty: the machine\'s default.'),
        transformProfile: z.string().min(1).max(64).nullable().optional(),
        mirror: z.object({ enabled: z.boolean().optional(), intervalSec: z.number().int().min(30).max(86_400).optional() }).strict().optional(),
      }).strict(),
      responses: { 200: { description: 'Updated.', schema: machineView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const m = await visibleMachine(p, params.id);
        const updated: MachineRecord = {
          ...m, ...(body.programDir !== undefined ? { programDir: body.programDir } : {}), ...(body.transformProfile !== undefined ? { transformProfile: body.transformProfile } : {}),
          mirrorEnabled: body.mirror?.enabled ?? m.mirrorEnabled, mirrorIntervalSec: body.mirror?.intervalSec ?? m.mirrorIntervalSec, updatedAt: ctx.now(),
        };
        await ctx.db.write(async (tx) => {
          await repo.upsertMachine(tx, updated, false);
          await audit(tx, p, { action: 'machine.update', entityType: 'machine', entityId: m.id, machine: m.machineId, details: { ...body } });
        }, { transaction: true });
        return { status: 200, body: await machineOut(updated) };
      },
    }),
    defineOperation({
      operationId: 'listMachineFiles', method: 'GET', path: '/machines/{id}/files', summary: 'The program files on the machine, read through its gateway now', tags: ['fleet'], permission: 'fleet.read',
      params: idParams('mch'), query: z.object({ dir: z.string().min(1).max(1024).optional().describe('Directory; the machine\'s program directory by default.') }),
      responses: { 200: { description: 'The files.', schema: z.object({ machineId: z.string(), dir: z.string().nullable(), files: z.array(fileView), readAt: z.string() }) } },
      handler: async ({ params, query }, { principal }) => {
        const m = await visibleMachine(principalOf(principal), params.id);
        const g = (await repo.gateway(m.gatewayId)) as GatewayRecord;
        const dir = query.dir ?? (m.programDir || undefined);
        const files = await through(g, (link) => link.listPrograms(m.machineId, dir));
        return {
          status: 200,
          body: {
            machineId: m.id, dir: dir ?? null, readAt: iso(ctx.now()) as string,
            files: files.map((f) => ({ dir: f.dir, name: f.name, size: f.size, ...(f.modified !== undefined ? { modified: iso(f.modified) as string } : {}), ...(f.comment !== undefined ? { comment: f.comment } : {}) })),
          },
        };
      },
    }),
    defineOperation({
      operationId: 'createMachineGroup', method: 'POST', path: '/machine-groups', summary: 'Create a machine group of this service (scopes can name it)', tags: ['fleet'], permission: 'fleet.manage',
      body: z.object({ name: nameSchema, description: z.string().max(4000).default(''), machineIds: z.array(idOf('mch')).max(10_000).default([]) }).strict(),
      responses: { 201: { description: 'Created.', schema: groupView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        for (const [i, id] of body.machineIds.entries()) {
          if (!(await repo.machine(id))) throw new ProblemError('unacceptable', `no machine ${id}`, { errors: [{ field: `body.machineIds[${i}]`, message: 'no such machine' }] });
        }
        const now = ctx.now();
        const group: GroupRecord = { id: newId('grp'), name: body.name, gatewayId: null, gatewayGroupId: null, description: body.description, machineIds: [...new Set(body.machineIds)].sort(), createdAt: now, updatedAt: now };
        await ctx.db.write(async (tx) => {
          await repo.saveGroup(tx, group, true);
          await audit(tx, p, { action: 'group.create', entityType: 'machineGroup', entityId: group.id, details: { name: group.name, machines: group.machineIds.length } });
        }, { transaction: true });
        return { status: 201, body: groupOut(group), headers: { location: `/api/v1/machine-groups/${group.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listMachineGroups', method: 'GET', path: '/machine-groups', summary: 'Machine groups in your scope', tags: ['fleet'], permission: 'fleet.read',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of groups, by id.', schema: pageOf(groupView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const result = pageAfter(await repo.listGroups(query.limit + 1, after), query.limit, (g) => ({ id: g.id }));
        return { status: 200, body: { items: result.items.filter((g) => groupVisible(p, g.id)).map(groupOut), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'updateMachineGroup', method: 'PATCH', path: '/machine-groups/{id}', summary: 'Rename a group or change its members (a gateway\'s group takes its members from the gateway)', tags: ['fleet'], permission: 'fleet.manage',
      params: idParams('grp'), body: z.object({ name: nameSchema.optional(), description: z.string().max(4000).optional(), machineIds: z.array(idOf('mch')).max(10_000).optional() }).strict(),
      responses: { 200: { description: 'Updated.', schema: groupView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const g = groupVisible(p, params.id) ? await repo.group(params.id) : undefined;
        if (!g) throw new ProblemError('not-found', `no machine group ${params.id}`);
        if (body.machineIds && g.gatewayId) {
          throw new ProblemError('conflict', `group ${g.name} mirrors group ${g.gatewayGroupId} of its gateway; change its members there and sync`, { errors: [{ field: 'body.machineIds', message: 'members follow the gateway' }] });
        }
        for (const [i, id] of (body.machineIds ?? []).entries()) {
          if (!(await repo.machine(id))) throw new ProblemError('unacceptable', `no machine ${id}`, { errors: [{ field: `body.machineIds[${i}]`, message: 'no such machine' }] });
        }
        const updated: GroupRecord = {
          ...g, ...(body.name ? { name: body.name } : {}), ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.machineIds ? { machineIds: [...new Set(body.machineIds)].sort() } : {}), updatedAt: ctx.now(),
        };
        await ctx.db.write(async (tx) => {
          await repo.saveGroup(tx, updated, false);
          await audit(tx, p, { action: 'group.update', entityType: 'machineGroup', entityId: g.id, details: { ...body, machineIds: body.machineIds?.length } });
        }, { transaction: true });
        return { status: 200, body: groupOut(updated) };
      },
    }),
  ];
  const forUse = (m: MachineRecord) => ({ id: m.id, gatewayId: m.gatewayId, machineId: m.machineId, name: m.name, driver: m.driver, present: m.present, programDir: m.programDir, transformProfile: m.transformProfile });
  const service: FleetMachines = {
    async machine(id, principal) {
      const m = await repo.machine(id);
      if (!m || !(await machineVisible(principal, m))) return undefined;
      return forUse(m);
    },
    async machines(ids, principal) {
      const byId = new Map((await repo.machinesIn(ids)).map((m) => [m.id, m]));
      const out: ReturnType<typeof forUse>[] = [];
      for (const id of ids) {
        const m = byId.get(id);
        if (m && (await machineVisible(principal, m))) out.push(forUse(m));
      }
      return out;
    },
    async noteContact(gatewayId, error) {
      await repo.recordContact(gatewayId, ctx.now(), error);
    },
    async mirrored() {
      return (await repo.mirrored()).map((m) => ({ ...forUse(m), mirrorIntervalSec: m.mirrorIntervalSec }));
    },
    gatewayCounts: () => repo.gatewayCounts(),
    async group(id, principal) {
      const g = groupVisible(principal, id) ? await repo.group(id) : undefined;
      return g ? { id: g.id, name: g.name, machineIds: g.machineIds } : undefined;
    },
    async linkFor(machine) {
      const g = await repo.gateway(machine.gatewayId);
      if (!g) throw new GatewayLinkError('not-found', `gateway ${machine.gatewayId} of machine ${machine.machineId} is not registered`);
      return linkFor(g);
    },
  };
  return { ops: ops as AnyRestOperation[], sync, service };
}

export const gatewaysPlugin = definePlugin<ProgramsContext>({
  name: 'gateways',
  migrations: MIGRATIONS,
  async register(ctx) {
    const repo = new FleetRepository(ctx.db);
    const box = CredentialBox.open(ctx.dataDir);
    const { ops, sync, service } = fleetOperations(ctx, repo, box);
    for (const op of ops) ctx.rest.define(op);
    ctx.services.provide('fleet.machines', service);
    if (!ctx.localGateway) return;
    // The gateway in this process is registered at first start, and read at every start.
    let local = await repo.inProcessGateway();
    if (!local) {
      const record: GatewayRecord = {
        id: newId('gw'), name: 'local', kind: 'in-process', url: 'in-process', sealedKey: null, createdBy: 'system', createdAt: ctx.now(),
        lastContactAt: null, lastError: null, lastErrorAt: null, lastSyncAt: null,
      };
      await ctx.db.write(async (tx) => {
        await repo.insertGateway(tx, record);
        await ctx.audit.append(tx, { principalName: 'system', authMethod: 'internal', category: 'fleet', action: 'gateway.register', entityType: 'gateway', entityId: record.id, details: { name: 'local', kind: 'in-process' } });
      }, { transaction: true });
      local = record;
      ctx.logger.info({ gateway: record.id }, 'local gateway registered');
    }
    try {
      const report = await sync(local, null);
      ctx.logger.info({ added: report.machines.added.count, gone: report.machines.gone.count }, 'local gateway synced');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'local gateway not synced at start');
    }
  },
});
