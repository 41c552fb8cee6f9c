/**
 * /admin/gateway-tokens on the cloud's listener (admin-http.ts): the
 * gateway tokens managed over HTTP with an admin key. A token revoked or
 * rotated here is announced on the bus (`token.revoked`), so the broker
 * disconnects its gateway at once; with `cloud.dynamicSecurity` the
 * gateways' broker clients change with their tokens.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { CloudContext } from '../../core/roles/cloud/context.js';
import { serveAdmin } from './admin-http.js';

export const cloudAdminPlugin = definePlugin<CloudContext>({
  name: 'cloud-admin',
  dependsOn: ['cloud-broker'],
  register(ctx) {
    serveAdmin(ctx.http, {
      tokens: ctx.tokens,
      adminKeys: ctx.adminKeys,
      allowedOrigins: ctx.allowedOrigins,
      logger: ctx.logger,
      onRevoked: (tokenId) => ctx.bus.emit('token.revoked', { tokenId }),
      users: ctx.services.get('cloud.broker').users,
    });
  },
});
