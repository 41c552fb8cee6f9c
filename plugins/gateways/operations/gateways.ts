/** The fleet's gateways: register a remote one, list and read them, and sync one. */
import { z } from 'zod';
import { nameSchema } from '../../../core/rest/fields.js';
import { idParams, newId } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { GatewayRecord } from '../store.js';
import { syncGateway } from '../sync.js';
import type { FleetOperation } from './deps.js';
import { gatewayOut, gatewayView, syncReport } from './views.js';

export const GATEWAY_OPERATIONS: readonly FleetOperation[] = [
  ({ ctx, repo, box, audit, through }) => defineOperation({
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
    operationId: 'syncGateway', method: 'POST', path: '/gateways/{id}/sync', summary: 'Read the gateway\'s machines and groups; say what was added, changed and gone', tags: ['fleet'], permission: 'fleet.manage',
    params: idParams('gw'), responses: { 200: { description: 'What the sync changed. Machines that left are kept with present=false.', schema: syncReport } },
    handler: async ({ params }, { principal }) => {
      const g = await d.repo.gateway(params.id);
      if (!g) throw new ProblemError('not-found', `no gateway ${params.id}`);
      return { status: 200, body: await syncGateway(d, g, principalOf(principal)) };
    },
  }),
];
