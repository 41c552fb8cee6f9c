/**
 * The program service's console at `/` on its own port (plugins/console/web/programs)
 * and the shop-floor terminal at `/terminal` (plugins/console/web/terminal),
 * served as the gateway's is (./index.ts): a page on the `/api/v1`
 * operations only, so every operation in it is one any client can make (PV-01).
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { serveConsoles } from './index.js';

export const programsConsolePlugin = definePlugin<ProgramsContext>({
  name: 'programs-console',
  register(ctx) {
    serveConsoles(ctx.http, [
      { path: '/', name: 'programs', title: 'Program version service' },
      { path: '/terminal', name: 'terminal', title: 'Machine terminal' },
    ], ctx.logger.child({ component: 'console' }));
  },
});
