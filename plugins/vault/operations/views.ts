/**
 * What the vault's operations answer: the views of libraries, programs,
 * versions, approvals and diffs, and the shared input schemas.
 */
import { z } from 'zod';
import { isoOrNull, iso } from '../../../core/rest/fields.js';
import { CONTROLLERS, type Controller } from '../../../core/roles/programs/controllers.js';
import type { Library, Program, Version } from '../store.js';

/** Largest number of approvals a library's policy may require. */
export const MAX_APPROVALS = 5;

export const textSchema = z.string().max(4000);

export const policySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('autoRelease') }).strict(),
  z.object({ mode: z.literal('approvals'), required: z.number().int().min(1).max(MAX_APPROVALS) }).strict(),
]).describe('autoRelease: submit publishes at once; approvals: `required` different approvers must approve.');

export const libraryView = z.object({
  id: z.string(), name: z.string(), description: z.string(), approvalPolicy: policySchema, approvers: z.array(z.string()), createdBy: z.string(), createdAt: z.string(),
});
export const programView = z.object({
  id: z.string(), libraryId: z.string(), name: z.string(), controller: z.enum(CONTROLLERS), description: z.string(),
  fileName: z.string().describe('The file name its assignments give the machine unless they name their own: a template (docs/programs-assignments.md). By default its program number when its name starts with one (O1234 Flange OP10: O1234), else {program}.'),
  createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(),
});
export const versionStateSchema = z.enum(['draft', 'submitted', 'published', 'obsolete']);
export const versionView = z.object({
  id: z.string(), programId: z.string(), libraryId: z.string(), number: z.number().int(), sha256: z.string(), size: z.number().int(), notes: z.string(), author: z.string(),
  state: versionStateSchema, createdAt: z.string(), submittedAt: z.string().nullable(), submittedBy: z.string().nullable(), publishedAt: z.string().nullable(),
  obsoletedAt: z.string().nullable(), obsoletedBy: z.string().nullable(),
});
export const approvalStateSchema = z.enum(['pending', 'approved', 'rejected', 'cancelled']);
export const approvalView = z.object({
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
export const diffView = z.object({
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

export const libraryOut = (l: Library): z.infer<typeof libraryView> => ({
  id: l.id, name: l.name, description: l.description, approvalPolicy: l.policy, approvers: l.approvers, createdBy: l.createdBy, createdAt: iso(l.createdAt),
});
export const programOut = (p: Program): z.infer<typeof programView> => ({
  id: p.id, libraryId: p.libraryId, name: p.name, controller: p.controller as Controller, description: p.description, fileName: p.fileName, createdBy: p.createdBy,
  createdAt: iso(p.createdAt), updatedAt: iso(p.updatedAt),
});
export const versionOut = (v: Version, libraryId: string): z.infer<typeof versionView> => ({
  id: v.id, programId: v.programId, libraryId, number: v.number, sha256: v.sha256, size: v.size, notes: v.notes, author: v.author, state: v.state,
  createdAt: iso(v.createdAt), submittedAt: isoOrNull(v.submittedAt), submittedBy: v.submittedBy, publishedAt: isoOrNull(v.publishedAt), obsoletedAt: isoOrNull(v.obsoletedAt), obsoletedBy: v.obsoletedBy,
});
