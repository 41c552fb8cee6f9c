/**
 * The gateway's identity: its configured name and alias, and a gatewayID that
 * is generated once and kept in `<dataDir>/gateway-id`, so it survives
 * restarts and config edits and changes only with the data directory.
 */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { formatInZone } from '../../core/values/time.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { NorthboundStatus } from '../../core/roles/gateway/northbound-status.js';

export const GATEWAY_ID_FILE = 'gateway-id';

const gatewayIdSchema = z.uuid();

function isMissingFile(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Reads the gatewayID from the data dir, creating it on first start. */
export async function loadGatewayId(dataDir: string): Promise<string> {
  const file = join(dataDir, GATEWAY_ID_FILE);
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    const parsed = gatewayIdSchema.safeParse(stored);
    // A silently regenerated ID would make the cloud and the operators see a new gateway; refuse instead.
    if (!parsed.success) throw new Error(`${file} must hold a UUID; found '${stored.slice(0, 64)}'. Restore it, or delete it to generate a new gatewayID`);
    return parsed.data;
  } catch (err) {
    if (!isMissingFile(err)) throw err;
  }
  const id = randomUUID();
  // Write then rename, so a crash mid-write never leaves an empty or partial ID behind.
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${id}\n`, { encoding: 'utf8', mode: 0o644 });
  await rename(temp, file);
  return id;
}

/**
 * The cloud link's state, from the cloud-link plugin when it runs: its public
 * fields only (broker without credentials, token id, user, connection,
 * counters); its accessToken never (GW-14).
 */
function cloudLinkStatus(ctx: GatewayContext): CloudLinkStatus {
  return ctx.services.find('cloud-link')?.status() ?? { configured: false, connected: false };
}

/** The northbound targets' state, from the northbound plugin when it runs: never a password. */
function northboundStatus(ctx: GatewayContext): Promise<NorthboundStatus> {
  return ctx.services.find('northbound')?.status() ?? Promise.resolve({ targets: [] });
}

export function defineGatewayInfoInterface(ctx: GatewayContext, gatewayID: string): void {
  ctx.interfaces.implement(SYSTEM.gatewayInfo, {
    // An explicit allow-list: nothing from the config is spread in, so a secret added there later cannot leak here.
    handler: async () => ({
      name: ctx.identity.name,
      alias: ctx.identity.alias,
      gatewayID,
      version: ctx.version,
      startedAtMs: ctx.startedAt,
      startedAt: formatInZone(ctx.startedAt, ctx.timeZone),
      cloud: cloudLinkStatus(ctx),
      northbound: await northboundStatus(ctx),
    }),
  });
}
