/** What the assignments offer other plugins (deployments): an assignment as the caller may see it, and the file a machine gets. */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { iso } from '../../core/rest/fields.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { rowOf, type Assignment } from './store.js';
import { noDirectoryMessage } from './placement.js';
import { applyTransform, checkFileNameFor, TransformError } from './transform.js';

export interface AssignmentsService {
  assignment(id: string, principal: RestPrincipal): Promise<{ id: string; programId: string; targetKind: 'machine' | 'group'; targetId: string; dir: string } | undefined>;
  /** The transformed file for one machine: its directory, file name and bytes. Throws TransformError when a rule cannot apply or the machine's control will not take the name. */
  materialize(assignmentId: string, version: { id: string; number: number; sha256: string; content: Buffer; program: { name: string } }, machine: { machineId: string; programDir: string; system: string; model: string }, now: number): Promise<{ dir: string; fileName: string; content: Buffer }>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    assignments: AssignmentsService;
  }
}

/** Transformed files kept for reuse (the newest first out when full). */
const MADE_KEPT = 16;
/** How long an assignment read is used again without reading it afresh. */
const LOADED_MS = 2000;

/** The service, and what the plugin's own operations tell it: forget an assignment that changed or went. */
export function assignmentsService(ctx: ProgramsContext): AssignmentsService & { forget(id: string): void } {
  const made = new Map<string, { content: Buffer; fileName: string }>();
  // A batch to a group reads its assignment once, not once per machine: an assignment read is kept for a
  // short while (a change here forgets it at once; another instance's change is seen within LOADED_MS).
  const loaded = new Map<string, { a: Assignment; at: number }>();
  const load = async (id: string): Promise<Assignment | undefined> => {
    const known = loaded.get(id);
    if (known && Date.now() - known.at < LOADED_MS) return known.a;
    const r = await ctx.db.get('SELECT * FROM assignments WHERE id = ?', [id]);
    const a = r ? rowOf(r) : undefined;
    loaded.delete(id);
    if (a) {
      loaded.set(id, { a, at: Date.now() });
      if (loaded.size > 256) loaded.delete(loaded.keys().next().value as string);
    }
    return a;
  };
  return {
    forget(id) {
      loaded.delete(id);
    },
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
      // The file may be made for another machine of the batch: the name is judged for this machine's control.
      checkFileNameFor(result.fileName, machine.machineId, machine);
      const dir = a.dir || machine.programDir;
      if (!dir) throw new TransformError(noDirectoryMessage([machine.machineId]), 'dir');
      return { dir, fileName: result.fileName, content: result.content };
    },
  };
}

