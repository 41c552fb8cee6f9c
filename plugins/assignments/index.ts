/**
 * Machine assignments: which program goes to which machine (or machine
 * group), into which directory, under which file name, with which transform;
 * changed or removed; and the preview of a transform without touching the machine. Uses the
 * vault and the fleet through their services. docs/programs-assignments.md.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { assignmentOperations } from './operations.js';
import { assignmentsService } from './service.js';
import { MIGRATIONS } from './store.js';

export type { AssignmentsService } from './service.js';

export const assignmentsPlugin = definePlugin<ProgramsContext>({
  name: 'assignments',
  dependsOn: ['vault', 'gateways'],
  migrations: MIGRATIONS,
  register(ctx) {
    const service = assignmentsService(ctx);
    for (const op of assignmentOperations(ctx, (id) => service.forget(id))) ctx.rest.define(op);
    ctx.services.provide('assignments', service);
  },
});
