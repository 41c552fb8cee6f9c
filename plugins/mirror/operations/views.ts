/** What the mirror's operations answer: a machine's mirror, its files and snapshots, drift items and read reports. */
import { z } from 'zod';
import { iso, isoOrNull } from '../../../core/rest/fields.js';
import type { RunReport } from '../mirror.js';
import { DRIFT_STATUSES, type MirrorFile, type MirrorMachine, type Snapshot } from '../store.js';

/** A note a person gives with a decision, kept in the audit. */
export const noteSchema = z.string().max(1000).regex(/^[^\p{Cc}]*$/u, 'no control characters').default('').describe('Why (kept in the audit).');

const runningSchema = z.object({
  dir: z.string(), name: z.string(), sha256: z.string(), block: z.number().nullable(),
  expected: z.object({ assignmentId: z.string(), versionId: z.string(), sha256: z.string(), source: z.enum(['release', 'trial']) }).nullable(),
  matches: z.boolean().nullable().describe('True: the running program is byte for byte what was released (or the active trial\'s version); false: it differs; null: no managed file of that name.'),
  readAt: z.string(),
});
export const mirrorView = z.object({
  machineId: z.string(), enabled: z.boolean(), intervalSec: z.number().int().nullable(),
  lastRunAt: z.string().nullable(), lastOkAt: z.string().nullable(), lastError: z.string().nullable(), lastErrorAt: z.string().nullable(), files: z.number().int(),
  running: runningSchema.nullable().describe('What the machine was running at the last read, against what was released (proof of what ran).'),
  runningError: z.string().nullable().describe('Why the running program could not be read, if so.'),
});
export const fileView = z.object({
  id: z.string(), machineId: z.string(), dir: z.string(), name: z.string(), sha256: z.string().nullable(), size: z.number().int().nullable(), present: z.boolean(),
  firstSeenAt: z.string(), lastSeenAt: z.string().nullable(), goneAt: z.string().nullable(), adoptedProgramId: z.string().nullable(),
});
export const snapshotView = z.object({ id: z.string(), fileId: z.string(), sha256: z.string(), size: z.number().int(), takenAt: z.string(), trigger: z.string() });
export const driftView = z.object({
  id: z.string(), fileId: z.string(), machineId: z.string(), assignmentId: z.string(), dir: z.string(), fileName: z.string(),
  expected: z.object({ source: z.enum(['release', 'trial']), versionId: z.string(), sha256: z.string() }),
  foundSha256: z.string().nullable().describe('Null: the file is missing on the machine.'), snapshotId: z.string().nullable(),
  status: z.enum(DRIFT_STATUSES), openedAt: z.string(), updatedAt: z.string(), decidedBy: z.string().nullable(), decidedAt: z.string().nullable(), note: z.string().nullable(),
  resultVersionId: z.string().nullable().describe('Accepted: the draft version made from the machine\'s content.'),
  resultDeploymentId: z.string().nullable().describe('Rejected: the deployment that put the expected file back.'),
});
export const driftDetailView = driftView.extend({
  diff: z.object({ identical: z.boolean(), summary: z.record(z.string(), z.unknown()), unified: z.string() }).nullable().describe('The expected file against the machine\'s (docs/nc-diff.md); null when the file is missing.'),
});
export const runView = z.object({
  machineId: z.string(), trigger: z.enum(['interval', 'checkin']), at: z.string(), ok: z.boolean(), error: z.string().nullable(), files: z.number().int(), snapshots: z.number().int(),
  driftOpened: z.array(z.string()), driftResolved: z.array(z.string()), running: runningSchema.nullable(),
});

export const fileOut = (f: MirrorFile): z.infer<typeof fileView> => ({
  id: f.id, machineId: f.machineId, dir: f.dir, name: f.name, sha256: f.sha256, size: f.size, present: f.present, firstSeenAt: iso(f.firstSeenAt),
  lastSeenAt: isoOrNull(f.lastSeenAt), goneAt: isoOrNull(f.goneAt), adoptedProgramId: f.adoptedProgramId,
});
export const snapshotOut = (s: Snapshot): z.infer<typeof snapshotView> => ({ id: s.id, fileId: s.fileId, sha256: s.sha256, size: s.size, takenAt: iso(s.takenAt), trigger: s.trigger });
export const runningOut = (r: MirrorMachine['running']) => (r && 'sha256' in r ? { ...r, readAt: iso(r.readAt) } : null);
export const runOut = (r: RunReport): z.infer<typeof runView> => ({ ...r, at: iso(r.at), running: runningOut(r.running) });
