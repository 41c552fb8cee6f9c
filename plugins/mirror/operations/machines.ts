/** A machine's mirror: ask for a read now, and see the last read and what the machine was running. */
import { z } from 'zod';
import { isoOrNull } from '../../../core/rest/fields.js';
import { idOf } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { MirrorOperation } from './deps.js';
import { mirrorView, runningOut, runOut, runView } from './views.js';

/** How long a check-in with wait: true waits for the read. */
const CHECKIN_WAIT_MS = 60_000;

export const MACHINE_OPERATIONS: readonly MirrorOperation[] = [
  ({ ctx, mirror, audit, machineOf }) => defineOperation({
    operationId: 'requestCheckin', method: 'POST', path: '/machines/{id}/request-checkin', summary: 'Ask the mirror to read the machine now', tags: ['mirror'], permission: 'mirror.checkin',
    description: 'Without wait the read is queued (202); with wait: true the answer is the read\'s report (200), at most 60 s later.',
    params: z.object({ id: idOf('mch') }), body: z.object({ wait: z.boolean().default(false) }).strict().default({ wait: false }),
    responses: {
      200: { description: 'The read\'s report.', schema: runView },
      202: { description: 'Queued; GET /machines/{id}/mirror shows its outcome.', schema: z.object({ machineId: z.string(), queued: z.literal(true) }) },
    },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const m = await machineOf(params.id, p);
      if (!m.present) throw new ProblemError('state-conflict', `machine ${m.machineId} is no longer listed by its gateway (sync the gateway)`, { extensions: { state: 'inactive' } });
      await ctx.db.write((tx) => audit(tx, p, 'mirror.checkin', 'machine', m.id, m.id, { wait: body.wait }), { transaction: true });
      const run = mirror.run(m.id, 'checkin');
      if (!body.wait) {
        void run.catch(() => undefined);
        return { status: 202, body: { machineId: m.id, queued: true as const } };
      }
      const report = await Promise.race([run, new Promise<null>((r) => setTimeout(() => r(null), CHECKIN_WAIT_MS).unref())]);
      if (!report) throw new ProblemError('service-unavailable', 'the read takes longer than 60 s; it goes on, see GET /machines/{id}/mirror', { retryAfterSec: 30 });
      return { status: 200, body: runOut(report) };
    },
  }),
  ({ repo, fleet, machineOf }) => defineOperation({
    operationId: 'getMachineMirror', method: 'GET', path: '/machines/{id}/mirror', summary: 'The mirror of one machine: last read, its error, and what it was running against what was released', tags: ['mirror'], permission: 'fleet.read',
    params: z.object({ id: idOf('mch') }), responses: { 200: { description: 'The machine\'s mirror.', schema: mirrorView } },
    handler: async ({ params }, { principal }) => {
      const m = await machineOf(params.id, principalOf(principal));
      const settings = (await fleet().mirrored()).find((x) => x.id === m.id);
      const s = await repo.machine(m.id);
      return {
        status: 200,
        body: {
          machineId: m.id, enabled: Boolean(settings), intervalSec: settings?.mirrorIntervalSec ?? null, lastRunAt: isoOrNull(s?.lastRunAt ?? null), lastOkAt: isoOrNull(s?.lastOkAt ?? null),
          lastError: s?.lastError ?? null, lastErrorAt: isoOrNull(s?.lastErrorAt ?? null), files: s?.files ?? 0, running: runningOut(s?.running ?? null),
          runningError: s?.running && 'error' in s.running ? s.running.error : null,
        },
      };
    },
  }),
];
