/**
 * The vault's versions: upload (byte-exact, immutable), list, read, fetch the
 * content, submit for approval or publication, and make obsolete.
 */
import { z } from 'zod';
import { sha256Hex } from '../../../core/values/hash.js';
import { programText } from '../../../core/values/program-bytes.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { idParams, newId } from '../../../core/rest/ids.js';
import { principalOf } from '../../../core/rest/principal.js';
import { eligibleLeft } from '../duties.js';
import type { Approval, Version } from '../store.js';
import { stateConflict, type VaultDeps, type VaultOperation } from './deps.js';
import { approvalView, textSchema, versionOut, versionStateSchema, versionView } from './views.js';

/** Largest version content, in bytes (decoded). */
export const MAX_VERSION_BYTES = 4 * 1024 * 1024;
/** The upload body: the content in base64 (4/3 of it) plus room for the notes and JSON. */
export const UPLOAD_BODY_LIMIT = Math.ceil(MAX_VERSION_BYTES / 3) * 4 + 64 * 1024;

/** RFC 4648 base64 with `=` padding and nothing else (no line breaks, no URL alphabet); linear in the length. */
function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return /^[A-Za-z0-9+/]*$/.test(text.slice(0, text.length - pad));
}

/** Submits a draft: publishes it at once in an auto-release library, else opens its approval (returned). */
async function submit(d: VaultDeps, p: Parameters<VaultDeps['audit']>[1], found: Awaited<ReturnType<VaultDeps['visibleVersion']>>): Promise<string | null> {
  const { ctx, store, audit, change, published } = d;
  const { version, program, library } = found;
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
  return approvalId;
}

export const VERSION_OPERATIONS: readonly VaultOperation[] = [
  ({ ctx, store, audit, change, visibleProgram }) => defineOperation({
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
      const sha256 = sha256Hex(content);
      const draft = { id: newId('ver'), programId: program.id, sha256, size: content.length, notes: body.notes, author: p.name, authorOperator: p.onBehalfOf, state: 'draft' as const, createdAt: ctx.now(), submittedAt: null, submittedBy: null, submittedOperator: null, publishedAt: null, obsoletedAt: null, obsoletedBy: null };
      const number = await change(async (tx) => {
        const n = await store.insertVersion(tx, draft, content);
        await audit(tx, p, { category: 'vault', action: 'version.upload', entityType: 'version', entityId: draft.id, details: { programId: program.id, number: n, sha256, size: content.length } });
        return n;
      });
      return { status: 201, body: versionOut({ ...draft, number }, program.libraryId), headers: { location: `/api/v1/versions/${draft.id}` } };
    },
  }),
  ({ store, visibleProgram }) => defineOperation({
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
  ({ visibleVersion }) => defineOperation({
    operationId: 'getVersion', method: 'GET', path: '/versions/{id}', summary: 'One version', tags: ['vault'], permission: 'versions.read',
    params: idParams('ver'), responses: { 200: { description: 'The version.', schema: versionView } },
    handler: async ({ params }, { principal }) => {
      const { version, program } = await visibleVersion(principalOf(principal), params.id);
      return { status: 200, body: versionOut(version, program.libraryId) };
    },
  }),
  ({ store, visibleVersion }) => defineOperation({
    operationId: 'getVersionContent', method: 'GET', path: '/versions/{id}/content', summary: 'The exact bytes of a version (or base64 JSON with format=base64)', tags: ['vault'], permission: 'versions.read',
    params: idParams('ver'), query: z.object({ format: z.enum(['raw', 'base64']).default('raw') }),
    headers: [{ name: 'If-None-Match', maxLength: 1024, description: 'ETags you hold ("<sha256 hex>", comma-separated); 304 without a body when one is this version\'s.' }],
    responses: {
      200: {
        description: 'The bytes as uploaded (format=raw, application/octet-stream), or with format=base64 the JSON {contentBase64, sha256, size}; ETag "<sha256>".',
        contentType: 'application/octet-stream', schema: z.string(), headers: { ETag: '"<sha256 hex>"' },
        also: [{ contentType: 'application/json', schema: z.object({ contentBase64: z.string(), sha256: z.string(), size: z.number().int() }) }],
      },
      304: { description: 'Not modified: If-None-Match named this version\'s ETag.' },
    },
    handler: async ({ params, query }, { principal, request }) => {
      const { version, program } = await visibleVersion(principalOf(principal), params.id);
      const etag = `"${version.sha256}"`;
      const match = request.headers['if-none-match'];
      if (typeof match === 'string' && match.split(',').map((t) => t.trim().replace(/^W\//, '')).includes(etag)) return { status: 304, headers: { etag } };
      const content = (await store.content(version.id)) as Buffer;
      if (query.format === 'base64') return { status: 200, body: { contentBase64: content.toString('base64'), sha256: version.sha256, size: version.size }, headers: { etag, 'content-type': 'application/json' } };
      // Saved under the program's name and the version's number, in the characters every file system takes.
      const saved = `${program.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}-v${version.number}.nc`;
      return { status: 200, body: content, headers: { etag, 'content-disposition': `attachment; filename="${saved}"` } };
    },
  }),
  ({ store, visibleVersion }) => defineOperation({
    operationId: 'getVersionText', method: 'GET', path: '/versions/{id}/text', summary: 'The whole text of a version, read as a preview reads it: for a person to read before approving or deploying it', tags: ['vault'], permission: 'versions.read',
    params: idParams('ver'),
    responses: {
      200: {
        description: 'The text and how it was read; GET /versions/{id}/content has the bytes.',
        schema: z.object({
          text: z.string().describe('The content as text, line endings as they are (CR, LF or CR LF): UTF-8 when the bytes are valid UTF-8, else Windows-1252, which reads every byte as one character, so nothing is lost or replaced.'),
          encoding: z.enum(['utf-8', 'windows-1252']), sha256: z.string(), size: z.number().int(),
        }),
      },
    },
    handler: async ({ params }, { principal }) => {
      const { version } = await visibleVersion(principalOf(principal), params.id);
      const content = (await store.content(version.id)) as Buffer;
      return { status: 200, body: { ...programText(content), sha256: version.sha256, size: version.size } };
    },
  }),
  (d) => defineOperation({
    operationId: 'submitVersion', method: 'POST', path: '/versions/{id}/submit', summary: 'Submit a draft: publishes at once in an auto-release library, else opens an approval', tags: ['vault'], permission: 'versions.submit',
    params: idParams('ver'), responses: { 200: { description: 'The version, published or submitted, and the approval it waits for (null when published).', schema: z.object({ version: versionView, approval: approvalView.nullable() }) } },
    handler: async ({ params }, { principal }) => {
      const p = principalOf(principal);
      const found = await d.visibleVersion(p, params.id);
      const approvalId = await submit(d, p, found);
      const after = (await d.store.version(found.version.id)) as Version;
      const approval = approvalId ? await d.approvalOut((await d.store.approval(approvalId)) as Approval) : null;
      return { status: 200, body: { version: versionOut(after, found.library.id), approval } };
    },
  }),
  ({ ctx, store, audit, change, visibleVersion }) => defineOperation({
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
];
