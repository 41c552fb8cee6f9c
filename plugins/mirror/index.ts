/**
 * Mirror and drift: the machines' program files read on an interval and on
 * check-in, snapshots kept content-addressed, drift items with an NC-aware
 * diff and their triage (accept: a new draft version, never a silent
 * overwrite of the vault; reject: the expected file deployed back), adopting
 * files not under management, restoring a snapshot, and proof of what ran.
 * docs/programs-mirror.md.
 */
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { Mirror, type RunReport } from './mirror.js';
import { DRIFT_STATUSES, MIGRATIONS, MirrorRepository, type DriftItem, type MirrorFile, type MirrorMachine, type Snapshot } from './store.js';

const CONTROLLERS = ['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'] as const;
/** Files adopted by one adopt-all at most. */
const MAX_ADOPT = 500;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{16}$`), `an id such as ${prefix}_0123456789abcdef`);
const noteSchema = z.string().max(1000).regex(/^[^\p{Cc}]*$/u, 'no control characters').default('').describe('Why (kept in the audit).');
const nameSchema = z.string().min(1).max(128).regex(/^[^\p{Cc}]*$/u, 'no control characters');
const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};

const runningSchema = z.object({
  dir: z.string(), name: z.string(), sha256: z.string(), block: z.number().nullable(),
  expected: z.object({ assignmentId: z.string(), versionId: z.string(), sha256: z.string(), source: z.enum(['release', 'trial']) }).nullable(),
  matches: z.boolean().nullable().describe('True: the running program is byte for byte what was released (or the active trial\'s version); false: it differs; null: no managed file of that name.'),
  readAt: z.string(),
});
const mirrorView = z.object({
  machineId: z.string(), enabled: z.boolean(), intervalSec: z.number().int().nullable(),
  lastRunAt: z.string().nullable(), lastOkAt: z.string().nullable(), lastError: z.string().nullable(), lastErrorAt: z.string().nullable(), files: z.number().int(),
  running: runningSchema.nullable().describe('What the machine was running at the last read, against what was released (proof of what ran).'),
  runningError: z.string().nullable().describe('Why the running program could not be read, if so.'),
});
const fileView = z.object({
  id: z.string(), machineId: z.string(), dir: z.string(), name: z.string(), sha256: z.string().nullable(), size: z.number().int().nullable(), present: z.boolean(),
  firstSeenAt: z.string(), lastSeenAt: z.string().nullable(), goneAt: z.string().nullable(), adoptedProgramId: z.string().nullable(),
});
const snapshotView = z.object({ id: z.string(), fileId: z.string(), sha256: z.string(), size: z.number().int(), takenAt: z.string(), trigger: z.string() });
const driftView = z.object({
  id: z.string(), fileId: z.string(), machineId: z.string(), assignmentId: z.string(), dir: z.string(), fileName: z.string(),
  expected: z.object({ source: z.enum(['release', 'trial']), versionId: z.string(), sha256: z.string() }),
  foundSha256: z.string().nullable().describe('Null: the file is missing on the machine.'), snapshotId: z.string().nullable(),
  status: z.enum(DRIFT_STATUSES), openedAt: z.string(), updatedAt: z.string(), decidedBy: z.string().nullable(), decidedAt: z.string().nullable(), note: z.string().nullable(),
  resultVersionId: z.string().nullable().describe('Accepted: the draft version made from the machine\'s content.'),
  resultDeploymentId: z.string().nullable().describe('Rejected: the deployment that put the expected file back.'),
});
const driftDetailView = driftView.extend({
  diff: z.object({ identical: z.boolean(), summary: z.record(z.string(), z.unknown()), unified: z.string() }).nullable().describe('The expected file against the machine\'s (docs/nc-diff.md); null when the file is missing.'),
});
const runView = z.object({
  machineId: z.string(), trigger: z.enum(['interval', 'checkin']), at: z.string(), ok: z.boolean(), error: z.string().nullable(), files: z.number().int(), snapshots: z.number().int(),
  driftOpened: z.array(z.string()), driftResolved: z.array(z.string()), running: runningSchema.nullable(),
});

const fileOut = (f: MirrorFile): z.infer<typeof fileView> => ({
  id: f.id, machineId: f.machineId, dir: f.dir, name: f.name, sha256: f.sha256, size: f.size, present: f.present, firstSeenAt: iso(f.firstSeenAt) as string,
  lastSeenAt: iso(f.lastSeenAt), goneAt: iso(f.goneAt), adoptedProgramId: f.adoptedProgramId,
});
const snapshotOut = (s: Snapshot): z.infer<typeof snapshotView> => ({ id: s.id, fileId: s.fileId, sha256: s.sha256, size: s.size, takenAt: iso(s.takenAt) as string, trigger: s.trigger });
const runningOut = (r: MirrorMachine['running']) => (r && 'sha256' in r ? { ...r, readAt: iso(r.readAt) as string } : null);
const runOut = (r: RunReport): z.infer<typeof runView> => ({ ...r, at: iso(r.at) as string, running: runningOut(r.running) });

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

function operations(ctx: ProgramsContext, repo: MirrorRepository, mirror: Mirror): AnyRestOperation[] {
  const fleet = () => ctx.services.get('fleet.machines');
  const deployments = () => ctx.services.get('deployments');
  const vault = () => ctx.services.get('vault.versions');
  const machineOf = async (id: string, p: RestPrincipal) => {
    const m = await fleet().machine(id, p);
    if (!m) throw new ProblemError('not-found', `no machine ${id}`);
    return m;
  };
  const fileOf = async (id: string, p: RestPrincipal) => {
    const f = await repo.file(id);
    if (!f || !(await fleet().machine(f.machineId, p))) throw new ProblemError('not-found', `no machine file ${id}`);
    return f;
  };
  const driftOf = async (id: string, p: RestPrincipal) => {
    const d = await repo.drift(id);
    if (!d || !(await fleet().machine(d.machineId, p))) throw new ProblemError('not-found', `no drift item ${id}`);
    return d;
  };
  const driftOut = async (d: DriftItem): Promise<z.infer<typeof driftView>> => {
    const f = await repo.file(d.fileId);
    return {
      id: d.id, fileId: d.fileId, machineId: d.machineId, assignmentId: d.assignmentId, dir: f?.dir ?? '', fileName: f?.name ?? '',
      expected: { source: d.expectedSource, versionId: d.expectedVersionId, sha256: d.expectedSha256 }, foundSha256: d.foundSha256, snapshotId: d.snapshotId,
      status: d.status, openedAt: iso(d.openedAt) as string, updatedAt: iso(d.updatedAt) as string, decidedBy: d.decidedBy, decidedAt: iso(d.decidedAt), note: d.note,
      resultVersionId: d.resultVersionId, resultDeploymentId: d.resultDeploymentId,
    };
  };
  /** The machine's content of a drift item (its snapshot), or 409 when the file is missing. */
  const foundContent = async (d: DriftItem): Promise<Buffer> => {
    const content = d.foundSha256 ? await repo.content(d.foundSha256) : undefined;
    if (!content) throw new ProblemError('state-conflict', `drift item ${d.id}: the file is missing on the machine, so there is no content to accept; reject it to deploy the expected file back`, { extensions: { state: d.status } });
    return content;
  };
  /** Whether a file is under management: a release or trial names it, or it was adopted. */
  const managed = async (f: MirrorFile) => {
    if (f.adoptedProgramId) return true;
    const { expected } = await deployments().expectedOn(f.machineId);
    return expected.some((e) => e.fileName === f.name && e.dir.replace(/[\\/]+$/, '') === f.dir.replace(/[\\/]+$/, ''));
  };
  const audit = (tx: Parameters<Parameters<ProgramsContext['db']['write']>[0]>[0], p: RestPrincipal, action: string, entityType: string, entityId: string, machine: string, details: Record<string, unknown>) =>
    ctx.audit.append(tx, { principalName: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod, category: 'mirror', action, entityType, entityId, machine, details });

  const adoptOne = async (p: RestPrincipal, f: MirrorFile, library: { id: string; name: string }, name: string, controller: string): Promise<{ programId: string; versionId: string } | string> => {
    if (!f.sha256) return 'its content was not read yet (request a check-in)';
    const content = await repo.content(f.sha256);
    if (!content) return 'its content was not kept (larger than the mirror keeps)';
    return ctx.db.write(async (tx) => {
      const program = await vault().addProgram(tx, { libraryId: library.id, name, controller, description: `Adopted from ${f.dir}${f.name} on machine ${f.machineId}`, createdBy: p.name, now: ctx.now() });
      if (program === 'name-taken') return `library ${library.name} has a program named ${name}`;
      const version = await vault().addDraft(tx, { programId: program.id, content, notes: `adopted from machine file ${f.id}`, author: p.name, authorOperator: p.onBehalfOf, now: ctx.now() });
      await repo.adopted(tx, f.id, program.id);
      await audit(tx, p, 'file.adopt', 'machine-file', f.id, f.machineId, { programId: program.id, versionId: version.id, name, libraryId: library.id, sha256: version.sha256 });
      return { programId: program.id, versionId: version.id };
    }, { transaction: true });
  };
  const libraryOf = async (id: string, p: RestPrincipal) => {
    const l = await vault().library(id, p);
    if (!l) throw new ProblemError('not-found', `no library ${id}`, { errors: [{ field: 'body.libraryId', message: 'no such library' }] });
    return l;
  };

  const ops = [
    defineOperation({
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
        const report = await Promise.race([run, new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref())]);
        if (!report) throw new ProblemError('service-unavailable', 'the read takes longer than 60 s; it goes on, see GET /machines/{id}/mirror', { retryAfterSec: 30 });
        return { status: 200, body: runOut(report) };
      },
    }),
    defineOperation({
      operationId: 'getMachineMirror', method: 'GET', path: '/machines/{id}/mirror', summary: 'The mirror of one machine: last read, its error, and what it was running against what was released', tags: ['mirror'], permission: 'fleet.read',
      params: z.object({ id: idOf('mch') }), responses: { 200: { description: 'The machine\'s mirror.', schema: mirrorView } },
      handler: async ({ params }, { principal }) => {
        const m = await machineOf(params.id, principalOf(principal));
        const settings = (await fleet().mirrored()).find((x) => x.id === m.id);
        const s = await repo.machine(m.id);
        return {
          status: 200,
          body: {
            machineId: m.id, enabled: Boolean(settings), intervalSec: settings?.mirrorIntervalSec ?? null, lastRunAt: iso(s?.lastRunAt ?? null), lastOkAt: iso(s?.lastOkAt ?? null),
            lastError: s?.lastError ?? null, lastErrorAt: iso(s?.lastErrorAt ?? null), files: s?.files ?? 0, running: runningOut(s?.running ?? null),
            runningError: s?.running && 'error' in s.running ? s.running.error : null,
          },
        };
      },
    }),
    defineOperation({
      operationId: 'listMirroredFiles', method: 'GET', path: '/machine-files', summary: 'The files the mirror has seen on a machine', tags: ['mirror'], permission: 'fleet.read',
      query: z.object({ ...pageQueryShape, machineId: idOf('mch') }), responses: { 200: { description: 'A page of files.', schema: pageOf(fileView) } },
      handler: async ({ query }, { principal }) => {
        await machineOf(query.machineId, principalOf(principal));
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await repo.listFiles(query.machineId, query.limit + 1, after);
        const items = rows.slice(0, query.limit);
        const last = items[items.length - 1];
        return { status: 200, body: { items: items.map(fileOut), nextCursor: rows.length > query.limit && last ? encodeCursor({ id: last.id }) : null } };
      },
    }),
    defineOperation({
      operationId: 'getMachineFile', method: 'GET', path: '/machine-files/{id}', summary: 'One machine file as the mirror last saw it', tags: ['mirror'], permission: 'fleet.read',
      params: z.object({ id: idOf('mfl') }), responses: { 200: { description: 'The file.', schema: fileView } },
      handler: async ({ params }, { principal }) => ({ status: 200, body: fileOut(await fileOf(params.id, principalOf(principal))) }),
    }),
    defineOperation({
      operationId: 'listSnapshots', method: 'GET', path: '/machine-files/{id}/snapshots', summary: 'Every content the mirror has seen in this file, newest first', tags: ['mirror'], permission: 'fleet.read',
      params: z.object({ id: idOf('mfl') }), query: z.object(pageQueryShape), responses: { 200: { description: 'A page of snapshots.', schema: pageOf(snapshotView) } },
      handler: async ({ params, query }, { principal }) => {
        const f = await fileOf(params.id, principalOf(principal));
        const cursor = query.cursor ? decodeCursor(query.cursor, { takenAt: 'number', id: 'string' }) : null;
        const rows = await repo.snapshots(f.id, query.limit + 1, cursor ? { takenAt: Number(cursor.takenAt), id: String(cursor.id) } : null);
        const items = rows.slice(0, query.limit);
        const last = items[items.length - 1];
        return { status: 200, body: { items: items.map(snapshotOut), nextCursor: rows.length > query.limit && last ? encodeCursor({ takenAt: last.takenAt, id: last.id }) : null } };
      },
    }),
    defineOperation({
      operationId: 'restoreSnapshot', method: 'POST', path: '/machine-files/{id}/restore', summary: 'Put a snapshot back on the machine, verified by reading it back', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
      params: z.object({ id: idOf('mfl') }), body: z.object({ snapshotId: idOf('snp'), note: noteSchema }).strict(),
      responses: { 202: { description: 'The deployment that restores it; poll GET /deployments/{id}.', schema: z.object({ fileId: z.string(), snapshotId: z.string(), deploymentId: z.string() }) } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const f = await fileOf(params.id, p);
        const snap = await repo.snapshot(body.snapshotId);
        if (!snap || snap.fileId !== f.id) throw new ProblemError('not-found', `no snapshot ${body.snapshotId} of file ${f.id}`, { errors: [{ field: 'body.snapshotId', message: 'not a snapshot of this file' }] });
        const content = await repo.content(snap.sha256);
        if (!content) throw new ProblemError('state-conflict', `snapshot ${snap.id}: its content is not kept`);
        const { deploymentId } = await deployments().deployFile({
          machineId: f.machineId, dir: f.dir, fileName: f.name, content, versionId: null, assignmentId: null, purpose: 'restore', principal: p,
          details: { fileId: f.id, snapshotId: snap.id, note: body.note },
        });
        return { status: 202, body: { fileId: f.id, snapshotId: snap.id, deploymentId }, headers: { location: `/api/v1/deployments/${deploymentId}` } };
      },
    }),
    defineOperation({
      operationId: 'adoptFile', method: 'POST', path: '/machine-files/{id}/adopt', summary: 'Make a file not under management a program with a draft version of its content', tags: ['mirror'], permission: 'drift.manage',
      params: z.object({ id: idOf('mfl') }),
      body: z.object({ libraryId: idOf('lib'), name: nameSchema.optional().describe('The program\'s name; default the file name.'), controller: z.enum(CONTROLLERS).default('other') }).strict(),
      responses: { 201: { description: 'The new program and its draft version.', schema: z.object({ fileId: z.string(), programId: z.string(), versionId: z.string() }) } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const f = await fileOf(params.id, p);
        const library = await libraryOf(body.libraryId, p);
        if (await managed(f)) throw new ProblemError('state-conflict', `file ${f.name} is already under management (released by an assignment, or adopted)`, { extensions: { state: 'managed' } });
        const result = await adoptOne(p, f, library, body.name ?? f.name, body.controller);
        if (typeof result === 'string') throw new ProblemError('conflict', `file ${f.name}: ${result}`, { errors: [{ field: body.name ? 'body.name' : 'path.id', message: result }] });
        return { status: 201, body: { fileId: f.id, ...result }, headers: { location: `/api/v1/versions/${result.versionId}` } };
      },
    }),
    defineOperation({
      operationId: 'adoptAllFiles', method: 'POST', path: '/machines/{id}/adopt-all', summary: 'Make every file on the machine not under management a program with a draft version', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
      params: z.object({ id: idOf('mch') }), body: z.object({ libraryId: idOf('lib'), controller: z.enum(CONTROLLERS).default('other') }).strict(),
      responses: {
        200: {
          description: 'What was adopted, and what was not and why.',
          schema: z.object({
            machineId: z.string(), adopted: z.array(z.object({ fileId: z.string(), name: z.string(), programId: z.string(), versionId: z.string() })),
            skipped: z.array(z.object({ fileId: z.string(), name: z.string(), reason: z.string() })),
          }),
        },
      },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const m = await machineOf(params.id, p);
        const library = await libraryOf(body.libraryId, p);
        const adopted: { fileId: string; name: string; programId: string; versionId: string }[] = [];
        const skipped: { fileId: string; name: string; reason: string }[] = [];
        for (const f of await repo.filesOf(m.id)) {
          if (!f.present || (await managed(f))) continue;
          if (adopted.length >= MAX_ADOPT) {
            skipped.push({ fileId: f.id, name: f.name, reason: `at most ${MAX_ADOPT} files are adopted at once; call again` });
            continue;
          }
          const result = await adoptOne(p, f, library, f.name, body.controller);
          if (typeof result === 'string') skipped.push({ fileId: f.id, name: f.name, reason: result });
          else adopted.push({ fileId: f.id, name: f.name, ...result });
        }
        return { status: 200, body: { machineId: m.id, adopted, skipped } };
      },
    }),
    defineOperation({
      operationId: 'listDrift', method: 'GET', path: '/drift', summary: 'Drift items, newest first; filter by status and machine', tags: ['mirror'], permission: 'fleet.read',
      query: z.object({ ...pageQueryShape, status: z.enum(DRIFT_STATUSES).optional(), machineId: idOf('mch').optional() }),
      responses: { 200: { description: 'A page of drift items.', schema: pageOf(driftView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const cursor = query.cursor ? decodeCursor(query.cursor, { openedAt: 'number', id: 'string' }) : null;
        const rows = await repo.listDrift({ ...(query.status ? { status: query.status } : {}), ...(query.machineId ? { machineId: query.machineId } : {}) }, query.limit + 1, cursor ? { openedAt: Number(cursor.openedAt), id: String(cursor.id) } : null);
        const pageRows = rows.slice(0, query.limit);
        const items: z.infer<typeof driftView>[] = [];
        for (const d of pageRows) if (await fleet().machine(d.machineId, p)) items.push(await driftOut(d));
        const last = pageRows[pageRows.length - 1];
        return { status: 200, body: { items, nextCursor: rows.length > query.limit && last ? encodeCursor({ openedAt: last.openedAt, id: last.id }) : null } };
      },
    }),
    defineOperation({
      operationId: 'getDrift', method: 'GET', path: '/drift/{id}', summary: 'One drift item with the NC-aware diff of the expected file against the machine\'s', tags: ['mirror'], permission: 'fleet.read',
      params: z.object({ id: idOf('dft') }), responses: { 200: { description: 'The drift item.', schema: driftDetailView } },
      handler: async ({ params }, { principal }) => {
        const d = await driftOf(params.id, principalOf(principal));
        const [expected, found] = await Promise.all([deployments().content(d.expectedSha256), d.foundSha256 ? repo.content(d.foundSha256) : Promise.resolve(undefined)]);
        const diff = expected && found ? vault().diff(expected, found) : null;
        return { status: 200, body: { ...(await driftOut(d)), diff: diff ? { identical: diff.identical, summary: diff.summary as unknown as Record<string, unknown>, unified: diff.unified } : null } };
      },
    }),
    defineOperation({
      operationId: 'acceptDrift', method: 'POST', path: '/drift/{id}/accept', summary: 'Accept the machine\'s content: it becomes a new draft version of the program, which still needs submitting and approval', tags: ['mirror'], permission: 'drift.manage',
      params: z.object({ id: idOf('dft') }), body: z.object({ note: noteSchema }).strict().default({ note: '' }),
      responses: { 200: { description: 'Accepted; resultVersionId is the new draft.', schema: driftView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const d = await driftOf(params.id, p);
        if (d.status !== 'open') throw new ProblemError('state-conflict', `drift item ${d.id} is ${d.status}; only an open one is accepted or rejected`, { extensions: { state: d.status } });
        const assignment = await ctx.services.get('assignments').assignment(d.assignmentId, p);
        if (!assignment) throw new ProblemError('not-found', `assignment ${d.assignmentId} of drift item ${d.id} is not visible to you`);
        const content = await foundContent(d);
        const f = await repo.file(d.fileId);
        await ctx.db.write(async (tx) => {
          const version = await vault().addDraft(tx, { programId: assignment.programId, content, notes: `from machine file ${f?.dir ?? ''}${f?.name ?? ''} (drift ${d.id})${body.note ? `: ${body.note}` : ''}`.slice(0, 4000), author: p.name, authorOperator: p.onBehalfOf, now: ctx.now() });
          if (!(await repo.decide(tx, d.id, ['open'], 'accepted', { by: p.name, at: ctx.now(), note: body.note, versionId: version.id }))) {
            throw new ProblemError('state-conflict', `drift item ${d.id} was decided meanwhile`);
          }
          await audit(tx, p, 'drift.accept', 'drift', d.id, d.machineId, { versionId: version.id, number: version.number, sha256: version.sha256, programId: assignment.programId, note: body.note });
        }, { transaction: true });
        return { status: 200, body: await driftOut((await repo.drift(d.id)) as DriftItem) };
      },
    }),
    defineOperation({
      operationId: 'rejectDrift', method: 'POST', path: '/drift/{id}/reject', summary: 'Reject the machine\'s content: the expected file is deployed back and verified', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
      params: z.object({ id: idOf('dft') }), body: z.object({ note: noteSchema }).strict().default({ note: '' }),
      responses: { 200: { description: 'Rejected; resultDeploymentId puts the expected file back.', schema: driftView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const d = await driftOf(params.id, p);
        if (d.status !== 'open') throw new ProblemError('state-conflict', `drift item ${d.id} is ${d.status}; only an open one is accepted or rejected`, { extensions: { state: d.status } });
        const content = await deployments().content(d.expectedSha256);
        const f = await repo.file(d.fileId);
        if (!content || !f) throw new ProblemError('state-conflict', `drift item ${d.id}: the expected content is not kept; deploy the version again`);
        const { deploymentId } = await deployments().deployFile({
          machineId: d.machineId, dir: f.dir, fileName: f.name, content, versionId: d.expectedVersionId, assignmentId: d.assignmentId, purpose: 'drift-reject', principal: p,
          details: { driftId: d.id, note: body.note },
        });
        await ctx.db.write(async (tx) => {
          await repo.decide(tx, d.id, ['open'], 'rejected', { by: p.name, at: ctx.now(), note: body.note, deploymentId });
          await audit(tx, p, 'drift.reject', 'drift', d.id, d.machineId, { deploymentId, note: body.note });
        }, { transaction: true });
        return { status: 200, body: await driftOut((await repo.drift(d.id)) as DriftItem) };
      },
    }),
  ];
  return ops as AnyRestOperation[];
}

export const mirrorPlugin = definePlugin<ProgramsContext>({
  name: 'mirror',
  dependsOn: ['vault', 'gateways', 'assignments', 'deployments', 'webhooks'],
  migrations: MIGRATIONS,
  async register(ctx) {
    const repo = new MirrorRepository(ctx.db);
    const mirror = new Mirror(ctx, repo, ctx.logger);
    for (const op of operations(ctx, repo, mirror)) ctx.rest.define(op);
    ctx.services.provide('mirror', {
      machinesWithError: async (machineIds) => repo.countMachinesWithError(machineIds ?? (await ctx.services.get('fleet.machines').mirrored()).map((m) => m.id)),
      openDrift: () => repo.countOpenDrift(),
    });
    mirror.start();
    return { stop: () => mirror.stop() };
  },
});
