/** What the assignments offer other plugins (deployments): an assignment as the caller may see it, and the file a machine gets. */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { iso } from '../../core/rest/fields.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { rowOf, type Assignment } from './store.js';
import { applyTransform, TransformError } from './transform.js';

export interface AssignmentsService {
  assignment(id: string, principal: RestPrincipal): Promise<{ id: string; programId: string; targetKind: 'machine' | 'group'; targetId: string; dir: string } | undefined>;
  /** The transformed file for one machine: its directory, file name and bytes. Throws TransformError when a rule cannot apply. */
  materialize(assignmentId: string, version: { id: string; number: number; sha256: string; content: Buffer; program: { name: string } }, machine: { machineId: string; programDir: string }, now: number): Promise<{ dir: string; fileName: string; content: Buffer }>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    assignments: AssignmentsService;
  }
}

/** Transformed files kept for reuse (the newest first out when full). */
const MADE_KEPT = 16;

export function assignmentsService(ctx: ProgramsContext): AssignmentsService {
  const made = new Map<string, { content: Buffer; fileName: string }>();
  // Assignments never change once made, so a batch to a group reads its assignment once, not once per machine.
  const loaded = new Map<string, Assignment>();
  const load = async (id: string): Promise<Assignment | undefined> => {
    const known = loaded.get(id);
    if (known) return known;
    const r = await ctx.db.get('SELECT * FROM assignments WHERE id = ?', [id]);
    const a = r ? rowOf(r) : undefined;
    if (a) {
      loaded.set(id, a);
      if (loaded.size > 256) loaded.delete(loaded.keys().next().value as string);
    }
    return a;
  };
  return {
    async assignment(id, principal) {
      const a = await load(id);
      if (!a) return undefined;
      const fleet = ctx.services.get('gateway-machines');
      const seen = (await ctx.services.get('vault.versions').program(a.programId, principal)) && (a.targetKind === 'machine' ? await fleet.machine(a.targetId, principal) : await fleet.group(a.targetId, principal));
      return seen ? { id: a.id, programId: a.programId, targetKind: a.targetKind, targetId: a.targetId, dir: a.dir } : undefined;
    },
    async materialize(assignmentId, version, machine, now) {
      const a = await load(assignmentId);
      if (!a) throw new TransformError(`assignment ${assignmentId} no longer exists`, 'assignmentId');
      const date = iso(now).slice(0, 10);
      // A transform that does not name {machine} gives every machine the same file: made once per batch, not once per machine.
      const perMachine = JSON.stringify(a.transform).includes('{machine}');
      const key = `${a.id}|${JSON.stringify(a.transform)}|${version.id}|${date}|${perMachine ? machine.machineId : ''}`;
      let result = made.get(key);
      if (!result) {
        result = applyTransform(version.content, a.transform, {
          program: version.program.name, programNumber: '', version: String(version.number), versionId: version.id, sha256: version.sha256,
          sha8: version.sha256.slice(0, 8), date, machine: machine.machineId,
        });
        made.set(key, result);
        if (made.size > MADE_KEPT) made.delete(made.keys().next().value as string);
      }
      return { dir: a.dir || machine.programDir, fileName: result.fileName, content: result.content };
    },
  };
}

