/**
 * History: machine and group-machine history reads, the read-only query
 * interface /api/db/query, and background retention (docs/history.md).
 */
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { defineDbQueryInterface } from './db-query.js';
import { defineHistoryReadInterfaces } from './history-reads.js';
import { defineRetentionInterface, RetentionScheduler } from './retention.js';

export const historyPlugin = definePlugin<GatewayContext>({
  name: 'history',
  dependsOn: ['machine-actors'],
  register(ctx) {
    defineHistoryReadInterfaces(ctx);
    defineDbQueryInterface(ctx);
    const retention = new RetentionScheduler(ctx, ctx.logger.child({ component: 'retention' }));
    defineRetentionInterface(ctx, retention);
    retention.start();
    return { stop: () => retention.stop() };
  },
});
