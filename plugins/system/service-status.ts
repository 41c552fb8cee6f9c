/**
 * /api/system/service-status: each service inside the gateway with its status
 * and its queue — HTTP, the fleet of machine actors, the history writer and
 * the database files.
 */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { ConnectionState } from '../../core/roles/gateway/fleet/derive-state.js';

/** Size of a file in bytes; 0 when it does not exist (the WAL is absent after a checkpoint). */
async function fileSizeBytes(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

function httpStatus(ctx: GatewayContext) {
  const { server } = ctx.http;
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address : null;
  return {
    status: server.listening ? ('listening' as const) : ('not-listening' as const),
    address: bound?.address ?? null,
    port: bound?.port ?? null,
  };
}

/** Machine actors counted by connection state; an inactive machine holds no actor and counts as stopped. */
function fleetCounts(ctx: GatewayContext) {
  const actorsByState: Record<ConnectionState, number> = { online: 0, connecting: 0, backoff: 0, offline: 0, stopped: 0 };
  const ids = ctx.fleet.ids();
  for (const id of ids) actorsByState[ctx.fleet.connectionState(id)]++;
  return { status: 'running' as const, machineCount: ids.length, actorsByState };
}

function historyWriterStatus(ctx: GatewayContext) {
  const s = ctx.history.stats;
  return {
    status: 'running' as const,
    pendingRows: s.pending,
    inFlightRows: s.inFlight,
    rowsWritten: s.rowsWritten,
    flushes: s.flushes,
    failedFlushes: s.failedFlushes,
    droppedRows: s.droppedRows,
    lastSeq: s.lastSeq,
  };
}

async function databaseStatus(ctx: GatewayContext) {
  const file = ctx.db.file;
  const [sizeBytes, walSizeBytes] = await Promise.all([fileSizeBytes(file), fileSizeBytes(`${file}-wal`)]);
  return { status: 'open' as const, file: relative(ctx.dataDir, file), sizeBytes, walSizeBytes };
}

export function defineServiceStatusInterface(ctx: GatewayContext): void {
  ctx.interfaces.implement(SYSTEM.serviceStatus, {
    handler: async () => ({
      http: httpStatus(ctx),
      fleet: fleetCounts(ctx),
      historyWriter: historyWriterStatus(ctx),
      database: await databaseStatus(ctx),
    }),
  });
}
