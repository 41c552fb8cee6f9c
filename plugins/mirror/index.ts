/**
 * Mirror and drift: the machines' program files read on an interval and on
 * check-in, snapshots kept content-addressed, drift items with an NC-aware
 * diff and their triage (accept: a new draft version, never a silent
 * overwrite of the vault; reject: the expected file deployed back), adopting
 * files not under management, restoring a snapshot, and proof of what ran.
 * docs/programs-mirror.md.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { Mirror } from './mirror.js';
import { mirrorOperations } from './operations/index.js';
import { MIGRATIONS, MirrorRepository } from './store.js';
import { registerMirrorMetrics } from './metrics.js';

/** What the mirror offers other plugins (the dashboard). */
export interface MirrorService {
  /** Machines in `machineIds` whose last mirror read failed. */
  machinesWithError(machineIds?: readonly string[]): Promise<number>;
  openDrift(): Promise<number>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    mirror: MirrorService;
  }
}

export const mirrorPlugin = definePlugin<ProgramsContext>({
  name: 'mirror',
  dependsOn: ['vault', 'gateways', 'assignments', 'deployments', 'webhooks'],
  migrations: MIGRATIONS,
  async register(ctx) {
    const repo = new MirrorRepository(ctx.db);
    registerMirrorMetrics(ctx.metrics, ctx.db);
    const mirror = new Mirror(ctx, repo, ctx.logger);
    for (const op of mirrorOperations(ctx, repo, mirror)) ctx.rest.define(op);
    ctx.services.provide('mirror', {
      machinesWithError: async (machineIds) => repo.countMachinesWithError(machineIds ?? (await ctx.services.get('gateway-machines').mirrored()).map((m) => m.id)),
      openDrift: () => repo.countOpenDrift(),
    });
    mirror.start();
    return { stop: () => mirror.stop() };
  },
});
