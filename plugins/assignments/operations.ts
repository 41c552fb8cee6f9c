/**
 * The assignments' operations: assign a program to a machine or a group,
 * list assignments, change an assignment's directory and transform or remove
 * it, and preview what a machine would receive.
 */
import { z } from 'zod';
import { sha256Hex } from '../../core/values/hash.js';
import { programText } from '../../core/values/program-bytes.js';
import { iso } from '../../core/rest/fields.js';
import { idOf, newId } from '../../core/rest/ids.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { auditActor, principalOf } from '../../core/rest/principal.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext, ProgramsServices } from '../../core/roles/programs/context.js';
import { noDirectoryMessage, placementDetail, placementProblems, type PlacedMachine } from './placement.js';
import { previewWarnings } from './preview-warnings.js';
import { rowOf, type Assignment } from './store.js';
import { applyTransform, transformSchema, TransformError, type Transform } from './transform.js';
import { fileNameTemplateSchema } from '../../core/roles/programs/file-name-template.js';

/** A transform as a request gives it: without a file name, the assignment's default (withFileName). */
const transformInput = transformSchema.extend({
  fileName: fileNameTemplateSchema.optional().describe('File name on the machine; a template. Without it: O{programNumber} when programNumber is given, else the program\'s fileName.'),
});

/** The transform with its file name: the one given, else O{programNumber} when it renumbers, else the program's own. */
function withFileName(t: z.output<typeof transformInput> | undefined, program: { fileName: string }): Transform {
  const given = t ?? transformInput.parse({});
  return { ...given, fileName: given.fileName ?? (given.programNumber !== undefined ? 'O{programNumber}' : program.fileName) };
}

// Its '..' segments are refused with the file name, when the assignment is made (placement.ts).
const dirSchema = z.string().max(1024).regex(/^[^\p{Cc}]*$/u, 'no control characters');

const assignmentView = z.object({
  id: z.string(), programId: z.string(), machineId: z.string().nullable(), groupId: z.string().nullable(),
  dir: z.string().describe('Directory on the controller; empty: the machine\'s program directory.'), transform: transformSchema,
  createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(),
});
const previewView = z.object({
  assignmentId: z.string(), machineId: z.string(), dir: z.string(), fileName: z.string(),
  source: z.object({ versionId: z.string(), number: z.number().int(), state: z.string(), sha256: z.string(), size: z.number().int() }),
  result: z.object({
    sha256: z.string(), size: z.number().int(), contentBase64: z.string().describe('The exact bytes.'),
    text: z.string().nullable().describe('The content as text, in the encoding named (a reading aid; contentBase64 is the file).'),
    encoding: z.enum(['utf-8', 'windows-1252']).describe('utf-8 when the bytes are valid UTF-8, else windows-1252, which reads every byte as one character.'),
  }),
  diff: z.object({ identical: z.boolean(), summary: z.record(z.string(), z.unknown()), unified: z.string() }).describe('The transformed content against the source version (docs/nc-diff.md).'),
  warnings: z.array(z.string()).describe('What stands in the way of deploying this to the machine, in plain words (a machine that cannot take the file, or cannot say yet); empty when nothing does.'),
});

const out = (a: Assignment): z.infer<typeof assignmentView> => ({
  id: a.id, programId: a.programId, machineId: a.targetKind === 'machine' ? a.targetId : null, groupId: a.targetKind === 'group' ? a.targetId : null,
  dir: a.dir, transform: a.transform, createdBy: a.createdBy, createdAt: iso(a.createdAt), updatedAt: iso(a.updatedAt),
});

/** What the assignments' operations share. */
interface AssignmentDeps {
  ctx: ProgramsContext;
  vault(): ProgramsServices['vault.versions'];
  fleet(): ProgramsServices['gateway-machines'];
  assignment(id: string): Promise<Assignment | undefined>;
  /** Visible when the caller sees both the program and the target. */
  visible(p: RestPrincipal, a: Assignment): Promise<boolean>;
  /** The machines an assignment's file goes to, as the caller sees them: the machine, or the group's members. */
  targetMachines(p: RestPrincipal, targetKind: Assignment['targetKind'], targetId: string): Promise<PlacedMachine[] | undefined>;
  /** Tells the service an assignment changed or went, so no batch uses what it remembered of it. */
  changed(id: string): void;
}

/** The assignment `id` as the caller may see it, else 404. */
async function visibleAssignment(d: AssignmentDeps, p: RestPrincipal, id: string): Promise<Assignment> {
  const a = await d.assignment(id);
  if (!a || !(await d.visible(p, a))) throw new ProblemError('not-found', `no assignment ${id}`);
  return a;
}

const ASSIGNMENT_OPERATIONS: readonly ((d: AssignmentDeps) => AnyRestOperation)[] = [
  ({ ctx, vault, targetMachines }) => defineOperation({
    operationId: 'createAssignment', method: 'POST', path: '/machine-assignments', summary: 'Assign a program to a machine or a machine group, with a directory and a transform', tags: ['assignments'], permission: 'assignments.manage',
    body: z.object({
      programId: idOf('prg'), machineId: idOf('mch').optional(), groupId: idOf('grp').optional(),
      dir: dirSchema.default(''), transform: transformInput.optional(),
    }).strict(),
    responses: { 201: { description: 'Created.', schema: assignmentView } },
    handler: async ({ body }, { principal }) => {
      const p = principalOf(principal);
      if ((body.machineId === undefined) === (body.groupId === undefined)) {
        throw new ProblemError('invalid-request', 'give machineId or groupId, exactly one', { errors: [{ field: 'body.machineId', message: 'give machineId or groupId, exactly one', accepted: 'machineId or groupId' }] });
      }
      const program = await vault().program(body.programId, p);
      if (!program) throw new ProblemError('not-found', `no program ${body.programId}`, { errors: [{ field: 'body.programId', message: 'no such program' }] });
      const targetKind = body.machineId ? 'machine' : 'group';
      const targetId = (body.machineId ?? body.groupId) as string;
      const targets = await targetMachines(p, targetKind, targetId);
      if (!targets) throw new ProblemError('not-found', `no ${targetKind === 'machine' ? 'machine' : 'machine group'} ${targetId}`, { errors: [{ field: `body.${targetKind}Id`, message: 'no such target' }] });
      const transform = withFileName(body.transform, program);
      const misplaced = placementProblems(body.dir, transform, program.name, targets);
      if (misplaced.length) throw new ProblemError('unacceptable', placementDetail(misplaced), { errors: misplaced });
      const existing = await ctx.db.get('SELECT id FROM assignments WHERE program_id = ? AND target_kind = ? AND target_id = ?', [body.programId, targetKind, targetId]);
      if (existing) throw new ProblemError('conflict', `program ${body.programId} is already assigned to ${targetId} (${String(existing.id)})`, { extensions: { assignmentId: String(existing.id) } });
      const now = ctx.now();
      const a: Assignment = { id: newId('asg'), programId: body.programId, targetKind, targetId, dir: body.dir, transform, createdBy: p.name, createdAt: now, updatedAt: now };
      await ctx.db.write(async (tx) => {
        await tx.run('INSERT INTO assignments (id, program_id, target_kind, target_id, dir, transform, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
          a.id, a.programId, a.targetKind, a.targetId, a.dir, JSON.stringify(a.transform), a.createdBy, a.createdAt, a.updatedAt,
        ]);
        await ctx.audit.append(tx, {
          ...auditActor(p), category: 'assignment', action: 'assignment.create', entityType: 'assignment', entityId: a.id,
          details: { programId: a.programId, [`${targetKind}Id`]: targetId, dir: a.dir, fileName: a.transform.fileName },
        });
      }, { transaction: true });
      return { status: 201, body: out(a), headers: { location: `/api/v1/machine-assignments/${a.id}` } };
    },
  }),
  ({ ctx, visible }) => defineOperation({
    operationId: 'listAssignments', method: 'GET', path: '/machine-assignments', summary: 'Assignments you can see (program and target in your scopes)', tags: ['assignments'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape, programId: idOf('prg').optional(), machineId: idOf('mch').optional(), groupId: idOf('grp').optional() }),
    responses: { 200: { description: 'A page of assignments, by id.', schema: pageOf(assignmentView) } },
    handler: async ({ query }, { principal }) => {
      const p = principalOf(principal);
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : '';
      const where: string[] = ['id > ?'];
      const params: (string | number)[] = [after];
      const filters: [string, string | undefined][] = [
        ['program_id = ?', query.programId],
        ["target_kind = 'machine' AND target_id = ?", query.machineId],
        ["target_kind = 'group' AND target_id = ?", query.groupId],
      ];
      for (const [condition, value] of filters) {
        if (value === undefined) continue;
        where.push(condition);
        params.push(value);
      }
      const rows = (await ctx.db.all(`SELECT * FROM assignments WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`, [...params, query.limit + 1])).map(rowOf);
      const pageRows = rows.slice(0, query.limit);
      const items: Assignment[] = [];
      for (const a of pageRows) if (await visible(p, a)) items.push(a);
      const last = pageRows[pageRows.length - 1];
      return { status: 200, body: { items: items.map(out), nextCursor: rows.length > query.limit && last ? encodeCursor({ id: last.id }) : null } };
    },
  }),
  (d) => defineOperation({
    operationId: 'updateAssignment', method: 'PATCH', path: '/machine-assignments/{id}', summary: 'Change an assignment\'s directory or transform; its program and target stay', tags: ['assignments'], permission: 'assignments.manage',
    description: 'Checked like a new assignment (a path-like file name or directory, or no directory for a machine without one, is 422). Deployments already made keep their files; the next deployment uses the change.',
    params: z.object({ id: idOf('asg') }),
    body: z.object({ dir: dirSchema.optional(), transform: transformInput.optional() }).strict(),
    responses: { 200: { description: 'The assignment as changed.', schema: assignmentView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const a = await visibleAssignment(d, p, params.id);
      const program = await d.vault().program(a.programId, p);
      const targets = await d.targetMachines(p, a.targetKind, a.targetId);
      if (!program || !targets) throw new ProblemError('not-found', `no assignment ${params.id}`);
      const changed: Assignment = { ...a, dir: body.dir ?? a.dir, transform: body.transform ? withFileName(body.transform, program) : a.transform, updatedAt: d.ctx.now() };
      const misplaced = placementProblems(changed.dir, changed.transform, program.name, targets);
      if (misplaced.length) throw new ProblemError('unacceptable', placementDetail(misplaced), { errors: misplaced });
      await d.ctx.db.write(async (tx) => {
        await tx.run('UPDATE assignments SET dir = ?, transform = ?, updated_at = ? WHERE id = ?', [changed.dir, JSON.stringify(changed.transform), changed.updatedAt, a.id]);
        await d.ctx.audit.append(tx, {
          ...auditActor(p), category: 'assignment', action: 'assignment.update', entityType: 'assignment', entityId: a.id,
          details: { before: { dir: a.dir, transform: a.transform }, after: { dir: changed.dir, transform: changed.transform } },
        });
      }, { transaction: true });
      d.changed(a.id);
      return { status: 200, body: out(changed) };
    },
  }),
  (d) => defineOperation({
    operationId: 'deleteAssignment', method: 'DELETE', path: '/machine-assignments/{id}', summary: 'Remove an assignment; what is on the machines and the deployments made stay as they are', tags: ['assignments'], permission: 'assignments.manage',
    params: z.object({ id: idOf('asg') }),
    responses: { 204: { description: 'Removed. Deployments and trials made under it keep their records; no new deployment can name it.' } },
    handler: async ({ params }, { principal }) => {
      const p = principalOf(principal);
      const a = await visibleAssignment(d, p, params.id);
      await d.ctx.db.write(async (tx) => {
        await tx.run('DELETE FROM assignments WHERE id = ?', [a.id]);
        await d.ctx.audit.append(tx, {
          ...auditActor(p), category: 'assignment', action: 'assignment.delete', entityType: 'assignment', entityId: a.id,
          details: { programId: a.programId, [`${a.targetKind}Id`]: a.targetId, dir: a.dir, fileName: a.transform.fileName },
        });
      }, { transaction: true });
      d.changed(a.id);
      return { status: 204 };
    },
  }),
  ({ ctx, vault, fleet, assignment, visible }) => defineOperation({
    operationId: 'previewTransform', method: 'POST', path: '/machine-assignments/{id}/preview-transform', summary: 'What the machine would receive: the transformed content and its diff against the version, without touching the machine', tags: ['assignments'], permission: 'versions.read',
    params: z.object({ id: idOf('asg') }),
    body: z.object({
      versionId: idOf('ver').optional().describe('The version to transform; the newest published version of the program by default.'),
      machineId: idOf('mch').optional().describe('The machine, for a group assignment (the {machine} variable and its program directory).'),
    }).strict().optional(),
    responses: { 200: { description: 'The preview.', schema: previewView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const a = await visibleAssignment({ assignment, visible } as AssignmentDeps, p, params.id);
      const version = body?.versionId ? await vault().version(body.versionId, p) : await vault().latestPublished(a.programId, p);
      if (!version) {
        throw body?.versionId
          ? new ProblemError('not-found', `no version ${body.versionId}`, { errors: [{ field: 'body.versionId', message: 'no such version' }] })
          : new ProblemError('unacceptable', `program ${a.programId} has no published version yet; give versionId to preview a draft`, { errors: [{ field: 'body.versionId', message: 'needed: nothing is published' }] });
      }
      if (version.program.id !== a.programId) throw new ProblemError('unacceptable', `version ${version.id} belongs to program ${version.program.id}, not to this assignment's ${a.programId}`, { errors: [{ field: 'body.versionId', message: 'another program\'s version' }] });
      const machineId = a.targetKind === 'machine' ? a.targetId : body?.machineId;
      if (a.targetKind === 'group') {
        const group = await fleet().group(a.targetId, p);
        if (!machineId || !group?.machineIds.includes(machineId)) {
          throw new ProblemError('unacceptable', 'a group assignment is previewed for one of its machines: give machineId', { errors: [{ field: 'body.machineId', message: machineId ? 'not a member of the group' : 'missing', accepted: (group?.machineIds ?? []).slice(0, 20).join(', ') }] });
        }
      } else if (body?.machineId && body.machineId !== a.targetId) {
        throw new ProblemError('unacceptable', `this assignment is for machine ${a.targetId}`, { errors: [{ field: 'body.machineId', message: 'another machine', accepted: a.targetId }] });
      }
      const machine = await fleet().machine(machineId as string, p);
      if (!machine) throw new ProblemError('not-found', `no machine ${String(machineId)}`);
      let result;
      try {
        result = applyTransform(version.content, a.transform, {
          program: version.program.name, programNumber: '', version: String(version.number),
          versionId: version.id, sha256: version.sha256, sha8: version.sha256.slice(0, 8), date: iso(ctx.now()).slice(0, 10), machine: machine.machineId,
        }, machine);
      } catch (err) {
        if (err instanceof TransformError) throw new ProblemError('unacceptable', placementDetail([{ field: err.field, message: err.message }]), { errors: [{ field: err.field, message: err.message, ...(err.accepted ? { accepted: err.accepted } : {}) }] });
        throw err;
      }
      const { text, encoding } = programText(result.content);
      const diff = vault().diff(version.content, result.content);
      const warnings = [
        ...(a.dir || machine.programDir ? [] : [`${noDirectoryMessage([machine.machineId])}. A deployment to it is refused.`]),
        ...(await previewWarnings(machine, result.content, fleet())),
      ];
      return {
        status: 200,
        body: {
          assignmentId: a.id, machineId: machine.id, dir: a.dir || machine.programDir, fileName: result.fileName,
          source: { versionId: version.id, number: version.number, state: version.state, sha256: version.sha256, size: version.size },
          result: { sha256: sha256Hex(result.content), size: result.content.length, contentBase64: result.content.toString('base64'), text, encoding },
          diff: { identical: diff.identical, summary: diff.summary as unknown as Record<string, unknown>, unified: diff.unified },
          warnings,
        },
      };
    },
  }),
];

export function assignmentOperations(ctx: ProgramsContext, changed: (id: string) => void): AnyRestOperation[] {
  const vault = () => ctx.services.get('vault.versions');
  const fleet = () => ctx.services.get('gateway-machines');
  const deps: AssignmentDeps = {
    ctx, vault, fleet, changed,
    assignment: async (id) => {
      const r = await ctx.db.get('SELECT * FROM assignments WHERE id = ?', [id]);
      return r ? rowOf(r) : undefined;
    },
    visible: async (p, a) => Boolean(await vault().program(a.programId, p)) && Boolean(a.targetKind === 'machine' ? await fleet().machine(a.targetId, p) : await fleet().group(a.targetId, p)),
    targetMachines: async (p, targetKind, targetId) => {
      if (targetKind === 'machine') {
        const machine = await fleet().machine(targetId, p);
        return machine ? [machine] : undefined;
      }
      const group = await fleet().group(targetId, p);
      return group ? fleet().machines(group.machineIds, p) : undefined;
    },
  };
  return ASSIGNMENT_OPERATIONS.map((make) => make(deps));
}
