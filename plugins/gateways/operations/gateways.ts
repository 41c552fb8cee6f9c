/** The fleet's gateways: register a remote one, list and read them, change one (its name, its address), and sync one. */
import { z } from 'zod';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { GatewayLinkError } from '../../../core/gateway-link/types.js';
import { nameSchema } from '../../../core/rest/fields.js';
import { idParams, newId } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { SealedCredential } from '../../../core/store/credential-box.js';
import type { GatewayRecord } from '../store.js';
import { syncGateway } from '../sync.js';
import type { FleetDeps, FleetOperation } from './deps.js';
import { gatewayOut, gatewayView, syncReport } from './views.js';

const urlSchema = z.string().max(512).regex(/^https?:\/\/[^\s/?#]+(?::\d+)?\/?$/, 'an http:// or https:// base URL such as http://10.0.4.7:8080');
const secretKeySchema = z.string().min(16).max(256).regex(/^[\x21-\x7e]+$/, 'the key as the gateway showed it');
const updateBody = z.object({
  name: nameSchema.optional(),
  url: urlSchema.optional().describe('A remote gateway\'s new base URL; for an in-process gateway, the address the other instances reach it at.'),
  secretKey: secretKeySchema.optional().describe('A secret key of a user on that gateway (kept sealed, never returned).'),
}).strict();

/**
 * The address of an instance's gateway as the other instances will use it,
 * asked once before it is stored: an address that leads to another gateway
 * is refused (422 naming `body.url`); one that does not answer now is stored,
 * and shown unreachable until it does.
 */
async function refuseOtherGateway(g: GatewayRecord, url: string, key: string): Promise<{ error: string | null }> {
  let who: { gatewayID: string; name: string };
  try {
    // A person waits for this answer: a shorter wait than a transfer's.
    who = await new HttpGatewayLink(url, key, { timeoutMs: 10_000 }).identity();
  } catch (err) {
    if (err instanceof GatewayLinkError) return { error: err.message };
    throw err;
  }
  if (who.gatewayID === g.gatewayUid) return { error: null };
  throw new ProblemError('unacceptable', `the gateway at ${url} is ${who.gatewayID} ('${who.name.slice(0, 64)}'), not gateway ${g.name} (${g.gatewayUid ?? ''})`, {
    errors: [{ field: 'body.url', message: 'leads to another gateway', accepted: `the address of the gateway whose gateway-info says gatewayID ${g.gatewayUid ?? ''}` }],
  });
}

/**
 * A gateway as PATCH changes it: refused where its kind does not allow it,
 * its key sealed; for an instance's gateway, what asking at its address
 * answered (`contact`: null when it answered, else why not).
 */
async function changedGateway({ repo, box }: FleetDeps, g: GatewayRecord, body: z.infer<typeof updateBody>): Promise<{ changed: GatewayRecord; contact?: { error: string | null } }> {
  if (body.name !== undefined && body.name.toLowerCase() !== g.name.toLowerCase() && (await repo.gatewayByName(body.name))) {
    throw new ProblemError('conflict', `a gateway named ${body.name} is registered`, { errors: [{ field: 'body.name', message: 'already taken' }] });
  }
  const changed: GatewayRecord = { ...g, ...(body.name !== undefined ? { name: body.name } : {}) };
  if (body.url === undefined && body.secretKey === undefined) return { changed };
  let contact: { error: string | null } | undefined;
  if (g.kind === 'in-process') {
    if (g.gatewayUid === null) throw new ProblemError('state-conflict', `gateway ${g.name} has not been taken over by an instance's gateway since it was registered without its identity, so the address of that gateway cannot be told yet`);
    const missing = body.url === undefined && g.url === 'in-process' ? 'body.url' : body.secretKey === undefined && g.sealedKey === null ? 'body.secretKey' : undefined;
    if (missing) throw new ProblemError('invalid-request', `the first address of an instance's gateway needs both its url and a secretKey`, { errors: [{ field: missing, message: 'required with the other' }] });
    const url = (body.url ?? g.url).replace(/\/+$/, '');
    const key = body.secretKey ?? box.open(`gateway:${g.id}`, 'secretKey', JSON.parse(g.sealedKey ?? 'null') as SealedCredential);
    contact = await refuseOtherGateway(g, url, key);
  }
  const address = {
    ...changed,
    ...(body.url !== undefined ? { url: body.url.replace(/\/+$/, '') } : {}),
    ...(body.secretKey !== undefined ? { sealedKey: JSON.stringify(box.seal(`gateway:${g.id}`, 'secretKey', body.secretKey)) } : {}),
  };
  return contact ? { changed: address, contact } : { changed: address };
}

export const GATEWAY_OPERATIONS: readonly FleetOperation[] = [
  ({ ctx, repo, box, audit, through }) => defineOperation({
    operationId: 'registerGateway', method: 'POST', path: '/gateways', summary: 'Register a remote gateway: its URL and a secret key of a user on it (kept sealed, never returned)', tags: ['fleet'], permission: 'fleet.manage',
    body: z.object({ name: nameSchema, url: urlSchema, secretKey: secretKeySchema }).strict(),
    responses: { 201: { description: 'Registered; `reachable` says whether a first call succeeded.', schema: gatewayView } },
    handler: async ({ body }, { principal }) => {
      const p = principalOf(principal);
      if (await repo.gatewayByName(body.name)) throw new ProblemError('conflict', `a gateway named ${body.name} is registered`, { errors: [{ field: 'body.name', message: 'already taken' }] });
      const id = newId('gw');
      const record: GatewayRecord = {
        id, name: body.name, kind: 'http', url: body.url.replace(/\/+$/, ''), sealedKey: JSON.stringify(box.seal(`gateway:${id}`, 'secretKey', body.secretKey)),
        createdBy: p.name, createdAt: ctx.now(), lastContactAt: null, lastError: null, lastErrorAt: null, lastSyncAt: null, gatewayUid: null, host: null, servedBy: null, servedUntil: null,
      };
      await ctx.db.write(async (tx) => {
        await repo.insertGateway(tx, record);
        await audit(tx, p, { action: 'gateway.register', entityType: 'gateway', entityId: id, details: { name: record.name, url: record.url } });
      }, { transaction: true });
      await through(record, (link) => link.listMachines()).catch(() => undefined);
      return { status: 201, body: gatewayOut((await repo.gateway(id)) as GatewayRecord), headers: { location: `/api/v1/gateways/${id}` } };
    },
  }),
  ({ repo }) => defineOperation({
    operationId: 'listGateways', method: 'GET', path: '/gateways', summary: 'Gateways with their reachability', tags: ['fleet'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'A page of gateways, by id.', schema: pageOf(gatewayView) } },
    handler: async ({ query }) => {
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const result = pageAfter(await repo.listGateways(query.limit + 1, after), query.limit, (g) => ({ id: g.id }));
      return { status: 200, body: { items: result.items.map(gatewayOut), nextCursor: result.nextCursor } };
    },
  }),
  ({ repo }) => defineOperation({
    operationId: 'getGateway', method: 'GET', path: '/gateways/{id}', summary: 'One gateway', tags: ['fleet'], permission: 'fleet.read',
    params: idParams('gw'), responses: { 200: { description: 'The gateway.', schema: gatewayView } },
    handler: async ({ params }) => {
      const g = await repo.gateway(params.id);
      if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
      return { status: 200, body: gatewayOut(g) };
    },
  }),
  (d) => defineOperation({
    operationId: 'updateGateway', method: 'PATCH', path: '/gateways/{id}',
    summary: 'Rename a gateway, or change its address: a remote gateway\'s URL or key; for the gateway in an instance\'s process, the URL and secret key the other instances reach it with', tags: ['fleet'], permission: 'fleet.manage',
    params: idParams('gw'), body: updateBody,
    responses: { 200: { description: 'Changed; `reachable` says whether a call at the address succeeded.', schema: gatewayView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const g = await d.repo.gateway(params.id);
      if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
      if (body.name === undefined && body.url === undefined && body.secretKey === undefined) {
        throw new ProblemError('invalid-request', 'nothing to change: give name, url or secretKey', { errors: [{ field: 'body', message: 'names no field to change', accepted: 'name, url, secretKey' }] });
      }
      const { changed, contact } = await changedGateway(d, g, body);
      await d.ctx.db.write(async (tx) => {
        await d.repo.updateGateway(tx, changed);
        const fields = (['name', 'url', 'secretKey'] as const).filter((f) => body[f] !== undefined);
        // Never the key: only that it changed.
        await d.audit(tx, p, { action: 'gateway.update', entityType: 'gateway', entityId: g.id, details: { changed: fields, name: changed.name, url: changed.url } });
      }, { transaction: true });
      // A changed address is tried at once: an instance's gateway was asked who it is there, a remote one is asked for its machines.
      if (contact) await d.repo.recordContact(g.id, d.ctx.now(), contact.error);
      else if (body.url !== undefined || body.secretKey !== undefined) await d.through(changed, (link) => link.listMachines()).catch(() => undefined);
      return { status: 200, body: gatewayOut((await d.repo.gateway(g.id)) as GatewayRecord) };
    },
  }),
  (d) => defineOperation({
    operationId: 'syncGateway', method: 'POST', path: '/gateways/{id}/sync', summary: 'Read the gateway\'s machines and groups; say what was added, changed and gone', tags: ['fleet'], permission: 'fleet.manage',
    params: idParams('gw'), responses: { 200: { description: 'What the sync changed. Machines that left are kept with present=false.', schema: syncReport } },
    handler: async ({ params }, { principal }) => {
      const g = await d.repo.gateway(params.id);
      if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
      return { status: 200, body: await syncGateway(d, g, principalOf(principal)) };
    },
  }),
];
