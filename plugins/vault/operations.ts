/**
 * The vault's operations: libraries, programs, immutable versions and their
 * lifecycle (draft → submitted → published → obsolete), approvals with
 * separation of duties, and the NC-aware diff. docs/programs-vault.md.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { AuditEntry } from '../../core/roles/programs/audit/chain.js';
import type { WriteTx } from '../../core/store/database.js';
import { GatewayError } from '../../core/errors.js';
import { diffPrograms } from './nc/index.js';
import { DIALECTS } from './nc/options.js';
import { checkDecider, eligibleLeft, excludedOf } from './duties.js';
import { newId, type Approval, type Library, type Program, type Version, type VaultStore } from './store.js';

/** Largest version content, in bytes (decoded). */
export const MAX_VERSION_BYTES = 4 * 1024 * 1024;
/** The upload body: the content in base64 (4/3 of it) plus room for the notes and JSON. */
export const UPLOAD_BODY_LIMIT = Math.ceil(MAX_VERSION_BYTES / 3) * 4 + 64 * 1024;
export const CONTROLLERS = ['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'] as const;
const MAX_APPROVALS = 5;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{16}$`), `an id such as ${prefix}_0123456789abcdef`);
const idParams = (prefix: string) => z.object({ id: idOf(prefix) });
const nameSchema = z.string().trim().min(1).max(128).regex(/^[^\p{Cc}]+$/u, 'no control characters');
const textSchema = z.string().max(4000);
/** RFC 4648 base64 with `=` padding and nothing else (no line breaks, no URL alphabet); linear in the length. */
function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return /^[A-Za-z0-9+/]*$/.test(text.slice(0, text.length - pad));
}

const policySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('autoRelease') }).strict(),
  z.object({ mode: z.literal('approvals'), required: z.number().int().min(1).max(MAX_APPROVALS) }).strict(),
]).describe('autoRelease: submit publishes at once; approvals: `required` different approvers must approve.');

const libraryView = z.object({
  id: z.string(), name: z.string(), description: z.string(), approvalPolicy: policySchema, approvers: z.array(z.string()), createdBy: z.string(), createdAt: z.string(),
});
const programView = z.object({
  id: z.string(), libraryId: z.string(), name: z.string(), controller: z.enum(CONTROLLERS), description: z.string(), createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(),
});
const versionStateSchema = z.enum(['draft', 'submitted', 'published', 'obsolete']);
const versionView = z.object({
  id: z.string(), programId: z.string(), libraryId: z.string(), number: z.number().int(), sha256: z.string(), size: z.number().int(), notes: z.string(), author: z.string(),
  state: versionStateSchema, createdAt: z.string(), submittedAt: z.string().nullable(), submittedBy: z.string().nullable(), publishedAt: z.string().nullable(),
  obsoletedAt: z.string().nullable(), obsoletedBy: z.string().nullable(),
});
const approvalStateSchema = z.enum(['pending', 'approved', 'rejected', 'cancelled']);
const approvalView = z.object({
  id: z.string(), versionId: z.string(), programId: z.string(), libraryId: z.string(), versionNumber: z.number().int(), state: approvalStateSchema,
  required: z.number().int(), approvals: z.number().int(),
  decisions: z.array(z.object({
    approver: z.string(), onBehalfOf: z.string().nullable().describe('The operator the approver declared with X-On-Behalf-Of.'), decision: z.enum(['approve', 'reject']), comment: z.string(), decidedAt: z.string(),
  })),
  excluded: z.array(z.string()).describe('Who may not approve this version: its uploader and its submitter, and the operators they declared.'),
  eligibleApproversLeft: z.number().int().nullable().describe('With a named approver list: how many of them may still approve; null when any approver in scope may.'),
  createdBy: z.string(), createdAt: z.string(), decidedAt: z.string().nullable(),
});

const valueChange = z.object({ line: z.number(), fromLine: z.number(), from: z.union([z.number(), z.string()]).nullable(), to: z.union([z.number(), z.string()]).nullable(), changePercent: z.number().nullable() });
const codeAtLine = z.object({ code: z.string(), line: z.number() });
const countShown = z.object({ shown: z.number(), total: z.number() });
const sideInfo = z.object({ versionId: z.string(), number: z.number().int(), blocks: z.number(), lines: z.number(), bytes: z.number(), sha256: z.string(), encoding: z.string() });
const diffView = z.object({
  dialect: z.string(),
  from: sideInfo,
  to: sideInfo,
  identical: z.boolean(),
  hunks: z.array(z.object({
    fromStart: z.number(), fromCount: z.number(), toStart: z.number(), toCount: z.number(),
    lines: z.array(z.object({ op: z.enum([' ', '-', '+']), fromLine: z.number().optional(), toLine: z.number().optional(), text: z.string() })), cut: z.literal(true).optional(),
  })),
  summary: z.object({
    tools: z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.object({ tool: z.string(), from: z.array(z.string()), to: z.array(z.string()) })) }),
    feeds: z.array(valueChange), spindleSpeeds: z.array(valueChange),
    workOffsets: z.object({ added: z.array(codeAtLine), removed: z.array(codeAtLine) }),
    mCodes: z.object({ added: z.array(codeAtLine), removed: z.array(codeAtLine) }),
    blocksChanged: z.number(), blocksAdded: z.number(), blocksRemoved: z.number(),
  }),
  unified: z.string().optional(),
  truncated: z.object({ hunks: countShown.optional(), lines: countShown.optional(), summary: z.record(z.string(), countShown).optional() }).optional(),
  coarse: z.object({ reason: z.string(), regions: z.number(), fromBlocks: z.number(), toBlocks: z.number() }).optional(),
});

const libraryOut = (l: Library): z.infer<typeof libraryView> => ({
  id: l.id, name: l.name, description: l.description, approvalPolicy: l.policy, approvers: l.approvers, createdBy: l.createdBy, createdAt: iso(l.createdAt) as string,
});
const programOut = (p: Program): z.infer<typeof programView> => ({
  id: p.id, libraryId: p.libraryId, name: p.name, controller: p.controller as (typeof CONTROLLERS)[number], description: p.description, createdBy: p.createdBy,
  createdAt: iso(p.createdAt) as string, updatedAt: iso(p.updatedAt) as string,
});
const versionOut = (v: Version, libraryId: string): z.infer<typeof versionView> => ({
  id: v.id, programId: v.programId, libraryId, number: v.number, sha256: v.sha256, size: v.size, notes: v.notes, author: v.author, state: v.state,
  createdAt: iso(v.createdAt) as string, submittedAt: iso(v.submittedAt), submittedBy: v.submittedBy, publishedAt: iso(v.publishedAt), obsoletedAt: iso(v.obsoletedAt), obsoletedBy: v.obsoletedBy,
});

const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};

const inScope = (p: RestPrincipal, libraryId: string): boolean => p.scopes.libraries === '*' || p.scopes.libraries.includes(libraryId);
const scopeOf = (p: RestPrincipal) => p.scopes.libraries;

export function vaultOperations(ctx: ProgramsContext, store: VaultStore): AnyRestOperation[] {
  const audit = (tx: WriteTx, p: RestPrincipal, entry: Omit<AuditEntry, 'principalName' | 'onBehalfOf' | 'authMethod'>) =>
    ctx.audit.append(tx, { principalName: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod, ...entry });
  const change = <T>(job: (tx: WriteTx) => Promise<T>): Promise<T> => ctx.db.write(job, { transaction: true });
  /** The version.published webhook event, in the publishing transaction, when the webhooks plugin runs. */
  const published = async (tx: WriteTx, version: Version, program: Program): Promise<void> => {
    await ctx.services.find('webhooks.outbox')?.enqueue(tx, 'version.published', {
      versionId: version.id, programId: program.id, libraryId: program.libraryId, programName: program.name, number: version.number, sha256: version.sha256, size: version.size,
    });
  };

  /** The library, or 404 when it does not exist or is outside the caller's scope (the same answer). */
  const visibleLibrary = async (p: RestPrincipal, id: string, field?: string): Promise<Library> => {
    const library = inScope(p, id) ? await store.library(id) : undefined;
    if (!library) throw new ProblemError('not-found', `no library ${id}`, field ? { errors: [{ field, message: 'no such library' }] } : {});
    return library;
  };
  const visibleProgram = async (p: RestPrincipal, id: string): Promise<{ program: Program; library: Library }> => {
    const program = await store.program(id);
    const library = program && inScope(p, program.libraryId) ? await store.library(program.libraryId) : undefined;
    if (!program || !library) throw new ProblemError('not-found', `no program ${id}`);
    return { program, library };
  };
  const visibleVersion = async (p: RestPrincipal, id: string): Promise<{ version: Version; program: Program; library: Library }> => {
    const version = await store.version(id);
    const program = version ? await store.program(version.programId) : undefined;
    const library = program && inScope(p, program.libraryId) ? await store.library(program.libraryId) : undefined;
    if (!version || !program || !library) throw new ProblemError('not-found', `no version ${id}`);
    return { version, program, library };
  };
  const stateConflict = (what: string, state: string, allowed: string) =>
    new ProblemError('state-conflict', `${what} is ${state}; this needs ${allowed}`, { extensions: { state } });

  const approvalOut = async (a: Approval): Promise<z.infer<typeof approvalView>> => {
    const version = (await store.version(a.versionId)) as Version;
    const program = (await store.program(version.programId)) as Program;
    const library = (await store.library(program.libraryId)) as Library;
    return {
      id: a.id, versionId: a.versionId, programId: program.id, libraryId: library.id, versionNumber: version.number, state: a.state, required: a.required,
      approvals: a.decisions.filter((d) => d.decision === 'approve').length,
      decisions: a.decisions.map((d) => ({ approver: d.approver, onBehalfOf: d.onBehalfOf, decision: d.decision, comment: d.comment, decidedAt: iso(d.decidedAt) as string })),
      excluded: excludedOf(version),
      eligibleApproversLeft: a.state === 'pending' ? eligibleLeft(library, version, a) : null,
      createdBy: a.createdBy, createdAt: iso(a.createdAt) as string, decidedAt: iso(a.decidedAt),
    };
  };


  const ops = [
    defineOperation({
      operationId: 'createLibrary', method: 'POST', path: '/libraries', summary: 'Create a library with its approval policy', tags: ['vault'], permission: 'libraries.manage',
      body: z.object({
        name: nameSchema, description: textSchema.default(''), approvalPolicy: policySchema.default({ mode: 'approvals', required: 1 }),
        approvers: z.array(z.string().min(1).max(64)).max(100).default([]).describe('User or token names allowed to approve; empty: anyone with approvals.decide in scope.'),
      }).strict(),
      responses: { 201: { description: 'Created.', schema: libraryView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        if (await store.libraryByName(body.name)) throw new ProblemError('conflict', `a library named ${body.name} exists`, { errors: [{ field: 'body.name', message: 'already taken' }] });
        const policy = body.approvalPolicy;
        if (policy.mode === 'approvals' && body.approvers.length > 0 && new Set(body.approvers.map((a) => a.toLowerCase())).size < policy.required) {
          throw new ProblemError('unacceptable', `the policy needs ${policy.required} different approvers but only ${body.approvers.length} are named`, { errors: [{ field: 'body.approvers', message: 'fewer approvers than required' }] });
        }
        const library: Library = { id: newId('lib'), name: body.name, description: body.description, policy, approvers: [...new Set(body.approvers)], createdBy: p.name, createdAt: ctx.now() };
        await change(async (tx) => {
          await store.insertLibrary(tx, library);
          await audit(tx, p, { category: 'vault', action: 'library.create', entityType: 'library', entityId: library.id, details: { name: library.name, approvalPolicy: policy, approvers: library.approvers } });
        });
        return { status: 201, body: libraryOut(library), headers: { location: `/api/v1/libraries/${library.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listLibraries', method: 'GET', path: '/libraries', summary: 'List the libraries in your scope', tags: ['vault'], permission: 'libraries.read',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of libraries, by id.', schema: pageOf(libraryView) } },
      handler: async ({ query }, { principal }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await store.listLibraries(scopeOf(principalOf(principal)), query.limit + 1, after);
        const result = pageAfter(rows, query.limit, (l) => ({ id: l.id }));
        return { status: 200, body: { items: result.items.map(libraryOut), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getLibrary', method: 'GET', path: '/libraries/{id}', summary: 'One library', tags: ['vault'], permission: 'libraries.read',
      params: idParams('lib'), responses: { 200: { description: 'The library.', schema: libraryView } },
      handler: async ({ params }, { principal }) => ({ status: 200, body: libraryOut(await visibleLibrary(principalOf(principal), params.id)) }),
    }),
    defineOperation({
      operationId: 'createProgram', method: 'POST', path: '/programs', summary: 'Create a program in a library', tags: ['vault'], permission: 'programs.write',
      body: z.object({ libraryId: idOf('lib'), name: nameSchema, controller: z.enum(CONTROLLERS), description: textSchema.default('') }).strict(),
      responses: { 201: { description: 'Created.', schema: programView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        const library = await visibleLibrary(p, body.libraryId, 'body.libraryId');
        if (await store.programByName(library.id, body.name)) {
          throw new ProblemError('conflict', `library ${library.name} has a program named ${body.name}`, { errors: [{ field: 'body.name', message: 'already taken in this library' }] });
        }
        const now = ctx.now();
        const program: Program = { id: newId('prg'), libraryId: library.id, name: body.name, controller: body.controller, description: body.description, createdBy: p.name, createdAt: now, updatedAt: now };
        await change(async (tx) => {
          await store.insertProgram(tx, program);
          await audit(tx, p, { category: 'vault', action: 'program.create', entityType: 'program', entityId: program.id, details: { libraryId: library.id, name: program.name, controller: program.controller } });
        });
        return { status: 201, body: programOut(program), headers: { location: `/api/v1/programs/${program.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listPrograms', method: 'GET', path: '/programs', summary: 'List programs in your scope', tags: ['vault'], permission: 'programs.read',
      query: z.object({ ...pageQueryShape, libraryId: idOf('lib').optional() }),
      responses: { 200: { description: 'A page of programs, by id.', schema: pageOf(programView) } },
      handler: async ({ query }, { principal }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await store.listPrograms(scopeOf(principalOf(principal)), query.libraryId, query.limit + 1, after);
        const result = pageAfter(rows, query.limit, (x) => ({ id: x.id }));
        return { status: 200, body: { items: result.items.map(programOut), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getProgram', method: 'GET', path: '/programs/{id}', summary: 'One program', tags: ['vault'], permission: 'programs.read',
      params: idParams('prg'), responses: { 200: { description: 'The program.', schema: programView } },
      handler: async ({ params }, { principal }) => ({ status: 200, body: programOut((await visibleProgram(principalOf(principal), params.id)).program) }),
    }),
    defineOperation({
      operationId: 'updateProgram', method: 'PATCH', path: '/programs/{id}', summary: 'Rename a program or change its description or controller', tags: ['vault'], permission: 'programs.write',
      params: idParams('prg'), body: z.object({ name: nameSchema.optional(), controller: z.enum(CONTROLLERS).optional(), description: textSchema.optional() }).strict(),
      responses: { 200: { description: 'Updated.', schema: programView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const { program } = await visibleProgram(p, params.id);
        if (body.name && body.name.toLowerCase() !== program.name.toLowerCase() && (await store.programByName(program.libraryId, body.name))) {
          throw new ProblemError('conflict', `the library has a program named ${body.name}`, { errors: [{ field: 'body.name', message: 'already taken in this library' }] });
        }
        const updated: Program = { ...program, ...(body.name ? { name: body.name } : {}), ...(body.controller ? { controller: body.controller } : {}), ...(body.description !== undefined ? { description: body.description } : {}), updatedAt: ctx.now() };
        await change(async (tx) => {
          await store.updateProgram(tx, updated);
          await audit(tx, p, { category: 'vault', action: 'program.update', entityType: 'program', entityId: program.id, details: { ...body } });
        });
        return { status: 200, body: programOut(updated) };
      },
    }),
    defineOperation({
      operationId: 'deleteProgram', method: 'DELETE', path: '/programs/{id}', summary: 'Delete a program that has no published version', tags: ['vault'], permission: 'programs.write', highRisk: true,
      params: idParams('prg'), responses: { 204: { description: 'Deleted with its versions.' } },
      handler: async ({ params }, { principal }) => {
        const p = principalOf(principal);
        const { program } = await visibleProgram(p, params.id);
        if ((await store.countPublished(program.id)) > 0) throw stateConflict(`program ${program.name}`, 'published', 'no published version (make them obsolete first)');
        await change(async (tx) => {
          await store.deleteProgram(tx, program.id);
          await audit(tx, p, { category: 'vault', action: 'program.delete', entityType: 'program', entityId: program.id, details: { name: program.name, libraryId: program.libraryId } });
        });
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'uploadVersion', method: 'POST', path: '/programs/{id}/versions', summary: 'Upload a new version (byte-exact, immutable)', tags: ['vault'], permission: 'versions.upload',
      description: `The content is base64 of the file's exact bytes (any line ending or encoding is kept as sent), at most ${MAX_VERSION_BYTES} bytes decoded; more is 413.`,
      params: idParams('prg'), bodyLimit: UPLOAD_BODY_LIMIT,
      body: z.object({ contentBase64: z.string().min(1).max(UPLOAD_BODY_LIMIT).describe('Base64 (RFC 4648, padded) of the file content.'), notes: textSchema.default('') }).strict(),
      responses: { 201: { description: 'The new version, a draft.', schema: versionView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const { program } = await visibleProgram(p, params.id);
        if (!isStrictBase64(body.contentBase64)) {
          throw new ProblemError('invalid-request', 'body.contentBase64: not base64', { errors: [{ field: 'body.contentBase64', message: 'not base64', accepted: 'RFC 4648 base64 with = padding, no line breaks' }] });
        }
        const content = Buffer.from(body.contentBase64, 'base64');
        if (content.length > MAX_VERSION_BYTES) {
          throw new ProblemError('payload-too-large', `the content has ${content.length} bytes; at most ${MAX_VERSION_BYTES}`, { errors: [{ field: 'body.contentBase64', message: `${content.length} bytes`, accepted: `at most ${MAX_VERSION_BYTES} bytes` }] });
        }
        const sha256 = createHash('sha256').update(content).digest('hex');
        const draft = { id: newId('ver'), programId: program.id, sha256, size: content.length, notes: body.notes, author: p.name, authorOperator: p.onBehalfOf, state: 'draft' as const, createdAt: ctx.now(), submittedAt: null, submittedBy: null, submittedOperator: null, publishedAt: null, obsoletedAt: null, obsoletedBy: null };
        const number = await change(async (tx) => {
          const n = await store.insertVersion(tx, draft, content);
          await audit(tx, p, { category: 'vault', action: 'version.upload', entityType: 'version', entityId: draft.id, details: { programId: program.id, number: n, sha256, size: content.length } });
          return n;
        });
        return { status: 201, body: versionOut({ ...draft, number }, program.libraryId), headers: { location: `/api/v1/versions/${draft.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listVersions', method: 'GET', path: '/programs/{id}/versions', summary: 'Versions of a program, newest first', tags: ['vault'], permission: 'versions.read',
      params: idParams('prg'), query: z.object({ ...pageQueryShape, state: versionStateSchema.optional() }),
      responses: { 200: { description: 'A page of versions, highest number first.', schema: pageOf(versionView) } },
      handler: async ({ params, query }, { principal }) => {
        const { program } = await visibleProgram(principalOf(principal), params.id);
        const before = query.cursor ? Number(decodeCursor(query.cursor, { number: 'number' }).number) : null;
        const rows = await store.listVersions(program.id, query.state, query.limit + 1, before);
        const result = pageAfter(rows, query.limit, (v) => ({ number: v.number }));
        return { status: 200, body: { items: result.items.map((v) => versionOut(v, program.libraryId)), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getVersion', method: 'GET', path: '/versions/{id}', summary: 'One version', tags: ['vault'], permission: 'versions.read',
      params: idParams('ver'), responses: { 200: { description: 'The version.', schema: versionView } },
      handler: async ({ params }, { principal }) => {
        const { version, program } = await visibleVersion(principalOf(principal), params.id);
        return { status: 200, body: versionOut(version, program.libraryId) };
      },
    }),
    defineOperation({
      operationId: 'getVersionContent', method: 'GET', path: '/versions/{id}/content', summary: 'The exact bytes of a version (or base64 JSON with format=base64)', tags: ['vault'], permission: 'versions.read',
      params: idParams('ver'), query: z.object({ format: z.enum(['raw', 'base64']).default('raw') }),
      responses: {
        200: {
          description: 'The bytes as uploaded (format=raw, application/octet-stream), or with format=base64 the JSON {contentBase64, sha256, size}; ETag "<sha256>".',
          contentType: 'application/octet-stream', schema: z.string(), headers: { ETag: '"<sha256 hex>"' },
          also: [{ contentType: 'application/json', schema: z.object({ contentBase64: z.string(), sha256: z.string(), size: z.number().int() }) }],
        },
        304: { description: 'Not modified: If-None-Match named this version\'s ETag.' },
      },
      handler: async ({ params, query }, { principal, request }) => {
        const { version } = await visibleVersion(principalOf(principal), params.id);
        const etag = `"${version.sha256}"`;
        const match = request.headers['if-none-match'];
        if (typeof match === 'string' && match.split(',').map((t) => t.trim().replace(/^W\//, '')).includes(etag)) return { status: 304, headers: { etag } };
        const content = (await store.content(version.id)) as Buffer;
        if (query.format === 'base64') return { status: 200, body: { contentBase64: content.toString('base64'), sha256: version.sha256, size: version.size }, headers: { etag, 'content-type': 'application/json' } };
        return { status: 200, body: content, headers: { etag, 'content-disposition': `attachment; filename="${version.id}.nc"` } };
      },
    }),
    defineOperation({
      operationId: 'submitVersion', method: 'POST', path: '/versions/{id}/submit', summary: 'Submit a draft: publishes at once in an auto-release library, else opens an approval', tags: ['vault'], permission: 'versions.submit',
      params: idParams('ver'), responses: { 200: { description: 'The version, published or submitted, and the approval it waits for (null when published).', schema: z.object({ version: versionView, approval: approvalView.nullable() }) } },
      handler: async ({ params }, { principal }) => {
        const p = principalOf(principal);
        const { version, program, library } = await visibleVersion(p, params.id);
        if (version.state !== 'draft') throw stateConflict(`version ${version.number}`, version.state, 'a draft');
        const now = ctx.now();
        if (library.policy.mode === 'approvals' && library.approvers.length > 0) {
          const left = eligibleLeft(library, { ...version, submittedBy: p.name, submittedOperator: p.onBehalfOf }, { decisions: [] }) as number;
          if (left < library.policy.required) {
            throw new ProblemError('unacceptable', `nobody eligible is left to approve: the policy needs ${library.policy.required} approver(s) other than the uploader (${version.author}) and the submitter (${p.name}), and the library names ${left}`, {
              extensions: { eligibleApproversLeft: left, required: library.policy.required },
            });
          }
        }
        const approvalId = library.policy.mode === 'approvals' ? newId('apr') : null;
        await change(async (tx) => {
          if (library.policy.mode === 'autoRelease') {
            if (!(await store.transition(tx, version.id, ['draft'], 'published', { submittedAt: now, submittedBy: p.name, submittedOperator: p.onBehalfOf, publishedAt: now }))) throw stateConflict(`version ${version.number}`, 'no longer a draft', 'a draft');
            await audit(tx, p, { category: 'vault', action: 'version.submit', entityType: 'version', entityId: version.id, details: { programId: program.id, number: version.number } });
            await audit(tx, p, { category: 'vault', action: 'version.publish', entityType: 'version', entityId: version.id, details: { programId: program.id, number: version.number, autoRelease: true } });
            await published(tx, version, program);
          } else {
            if (!(await store.transition(tx, version.id, ['draft'], 'submitted', { submittedAt: now, submittedBy: p.name, submittedOperator: p.onBehalfOf }))) throw stateConflict(`version ${version.number}`, 'no longer a draft', 'a draft');
            await store.insertApproval(tx, { id: approvalId as string, versionId: version.id, state: 'pending', required: library.policy.required, createdBy: p.name, createdAt: now, decidedAt: null });
            await audit(tx, p, { category: 'vault', action: 'version.submit', entityType: 'version', entityId: version.id, details: { programId: program.id, number: version.number } });
            await audit(tx, p, { category: 'approval', action: 'approval.create', entityType: 'approval', entityId: approvalId, details: { versionId: version.id, required: library.policy.required } });
          }
        });
        ctx.services.find('webhooks.outbox')?.kick();
        const after = (await store.version(version.id)) as Version;
        const approval = approvalId ? await approvalOut((await store.approval(approvalId)) as Approval) : null;
        return { status: 200, body: { version: versionOut(after, library.id), approval } };
      },
    }),
    defineOperation({
      operationId: 'obsoleteVersion', method: 'POST', path: '/versions/{id}/obsolete', summary: 'Make a version obsolete (its open approval is cancelled)', tags: ['vault'], permission: 'versions.obsolete', highRisk: true,
      params: idParams('ver'), body: z.object({ reason: textSchema.default('') }).strict().optional(),
      responses: { 200: { description: 'The version, now obsolete.', schema: versionView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const { version, program, library } = await visibleVersion(p, params.id);
        if (version.state === 'obsolete') throw stateConflict(`version ${version.number}`, version.state, 'a draft, submitted or published version');
        const open = await store.openApprovalOf(version.id);
        const now = ctx.now();
        await change(async (tx) => {
          if (!(await store.transition(tx, version.id, ['draft', 'submitted', 'published'], 'obsolete', { obsoletedAt: now, obsoletedBy: p.name }))) throw stateConflict(`version ${version.number}`, 'obsolete', 'a draft, submitted or published version');
          if (open && (await store.closeApproval(tx, open.id, 'cancelled', now))) await audit(tx, p, { category: 'approval', action: 'approval.cancel', entityType: 'approval', entityId: open.id, details: { versionId: version.id } });
          await audit(tx, p, { category: 'vault', action: 'version.obsolete', entityType: 'version', entityId: version.id, details: { programId: program.id, number: version.number, was: version.state, reason: body?.reason ?? '' } });
        });
        return { status: 200, body: versionOut((await store.version(version.id)) as Version, library.id) };
      },
    }),
    defineOperation({
      operationId: 'listApprovals', method: 'GET', path: '/approvals', summary: 'Approvals in your scope, newest first', tags: ['approvals'], permission: 'approvals.read',
      query: z.object({ ...pageQueryShape, state: approvalStateSchema.optional(), libraryId: idOf('lib').optional() }),
      responses: { 200: { description: 'A page of approvals.', schema: pageOf(approvalView) } },
      handler: async ({ query }, { principal }) => {
        const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
        const rows = await store.listApprovals(scopeOf(principalOf(principal)), query.state, query.libraryId, query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null);
        const result = pageAfter(rows, query.limit, (a) => ({ createdAt: a.createdAt, id: a.id }));
        return { status: 200, body: { items: await Promise.all(result.items.map(approvalOut)), nextCursor: result.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'getApproval', method: 'GET', path: '/approvals/{id}', summary: 'One approval', tags: ['approvals'], permission: 'approvals.read',
      params: idParams('apr'), responses: { 200: { description: 'The approval.', schema: approvalView } },
      handler: async ({ params }, { principal }) => {
        const approval = await store.approval(params.id);
        if (!approval) throw new ProblemError('not-found', `no approval ${params.id}`);
        await visibleVersion(principalOf(principal), approval.versionId).catch(() => {
          throw new ProblemError('not-found', `no approval ${params.id}`);
        });
        return { status: 200, body: await approvalOut(approval) };
      },
    }),
    defineOperation({
      operationId: 'decideApproval', method: 'POST', path: '/approvals/{id}/decide', summary: 'Approve or reject; the uploader and the submitter may not approve', tags: ['approvals'], permission: 'approvals.decide',
      params: idParams('apr'), body: z.object({ decision: z.enum(['approve', 'reject']), comment: textSchema.default('') }).strict(),
      responses: { 200: { description: 'The approval after the decision, and its version.', schema: z.object({ approval: approvalView, version: versionView }) } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const approval = await store.approval(params.id);
        const visible = approval ? await visibleVersion(p, approval.versionId).catch(() => undefined) : undefined;
        if (!approval || !visible) throw new ProblemError('not-found', `no approval ${params.id}`);
        const { version, library } = visible;
        if (approval.state !== 'pending') throw stateConflict(`approval ${approval.id}`, approval.state, 'a pending approval');
        checkDecider(p, version, library, approval);
        const now = ctx.now();
        await change(async (tx) => {
          if (!(await store.insertDecision(tx, approval.id, { approver: p.name, onBehalfOf: p.onBehalfOf, decision: body.decision, comment: body.comment, decidedAt: now }))) {
            throw new ProblemError('conflict', `${p.onBehalfOf ? `${p.name} or ${p.onBehalfOf}` : p.name} has already decided on this approval`);
          }
          await audit(tx, p, { category: 'approval', action: 'approval.decide', entityType: 'approval', entityId: approval.id, details: { versionId: version.id, decision: body.decision, comment: body.comment.slice(0, 500) } });
          if (body.decision === 'reject') {
            await store.closeApproval(tx, approval.id, 'rejected', now);
            if (!(await store.transition(tx, version.id, ['submitted'], 'draft', { submittedAt: null, submittedBy: null, submittedOperator: null }))) throw stateConflict(`version ${version.number}`, 'no longer submitted', 'a submitted version');
            await audit(tx, p, { category: 'vault', action: 'version.reject', entityType: 'version', entityId: version.id, details: { number: version.number, approvalId: approval.id } });
          } else if ((await store.countApprovals(tx, approval.id)) >= approval.required) {
            await store.closeApproval(tx, approval.id, 'approved', now);
            if (!(await store.transition(tx, version.id, ['submitted'], 'published', { publishedAt: now }))) throw stateConflict(`version ${version.number}`, 'no longer submitted', 'a submitted version');
            await audit(tx, p, { category: 'vault', action: 'version.publish', entityType: 'version', entityId: version.id, details: { number: version.number, approvalId: approval.id } });
            await published(tx, version, visible.program);
          }
        });
        ctx.services.find('webhooks.outbox')?.kick();
        return { status: 200, body: { approval: await approvalOut((await store.approval(approval.id)) as Approval), version: versionOut((await store.version(version.id)) as Version, library.id) } };
      },
    }),
    defineOperation({
      operationId: 'diffVersions', method: 'GET', path: '/programs/{id}/diff', summary: 'NC-aware diff of two versions: hunks, what changes on the machine, and the unified text', tags: ['vault'], permission: 'versions.read',
      description: 'Blocks are compared after canonicalisation (block numbers, comments, whitespace, case, G01=G1, X3.100=X3.1); see docs/nc-diff.md for the rules.',
      params: idParams('prg'),
      query: z.object({
        from: idOf('ver'), to: idOf('ver'), format: z.enum(['json', 'unified']).default('json'), dialect: z.enum(DIALECTS).default('auto'),
        context: z.coerce.number().int().min(0).max(20).default(3),
      }),
      responses: {
        200: { description: 'format=json: the diff; format=unified: the plain unified text diff (text/plain).', schema: diffView, also: [{ contentType: 'text/plain', schema: z.string() }] },
      },
      handler: async ({ params, query }, { principal }) => {
        const p = principalOf(principal);
        const { program } = await visibleProgram(p, params.id);
        const side = async (field: 'from' | 'to', id: string) => {
          const version = await store.version(id);
          if (!version || version.programId !== program.id) {
            throw new ProblemError('not-found', `no version ${id} of program ${program.id}`, { errors: [{ field: `query.${field}`, message: 'not a version of this program' }] });
          }
          return { version, content: (await store.content(id)) as Buffer };
        };
        const from = await side('from', query.from);
        const to = await side('to', query.to);
        let diff;
        try {
          diff = diffPrograms(from.content, to.content, { dialect: query.dialect, context: query.context, unified: true });
        } catch (err) {
          if (err instanceof GatewayError) throw new ProblemError('unacceptable', err.message);
          throw err;
        }
        if (query.format === 'unified') return { status: 200, body: Buffer.from(diff.unified ?? ''), headers: { 'content-type': 'text/plain; charset=utf-8' } };
        const sideOut = (s: typeof from, info: typeof diff.from) => ({ versionId: s.version.id, number: s.version.number, ...info });
        return { status: 200, body: { ...diff, from: sideOut(from, diff.from), to: sideOut(to, diff.to) } };
      },
    }),
  ];
  return ops as AnyRestOperation[];
}
