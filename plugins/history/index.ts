/**
 * History: machine and group-machine history reads, the read-only query
 * interface /api/db/query, and background retention as `history.retention`
 * of the configuration says (./config.ts; docs/history.md).
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { defineDbQueryInterface } from './db-query.js';
import { defineHistoryReadInterfaces } from './history-reads.js';
import { defineRetentionInterface, RetentionScheduler } from './retention.js';
import { HISTORY_CONFIG, type HISTORY_FIELDS } from './config.js';

export const historyPlugin = definePlugin<GatewayContext, typeof HISTORY_FIELDS>({
  name: 'history',
  dependsOn: ['machine-actors'],
  config: HISTORY_CONFIG,
  register(ctx) {
    defineHistoryReadInterfaces(ctx);
    defineDbQueryInterface(ctx);
    const retention = new RetentionScheduler(ctx, ctx.settings.retention, ctx.logger.child({ component: 'retention' }));
    defineRetentionInterface(ctx, retention);
    retention.start();
    return { stop: () => retention.stop() };
  },
});
