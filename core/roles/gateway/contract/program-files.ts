/**
 * The gateway's program-file interfaces: a program's bytes from and to a
 * machine, fenced by a caller's token (docs/api.md, "Fencing"), and what each
 * machine can take before any transfer (docs/api.md, "Program files"). The
 * program service's link calls these.
 */
import { z } from 'zod';
import { defineEntry, queryBool, queryInt } from '../../../interfaces/registry.js';
import { programBytesInput } from '../../../values/program-bytes.js';
import { programBytesOutput } from '../api-outputs.js';
import { machineIdSchema } from '../machine-config.js';

/** Largest program accepted for upload, in bytes after decoding. */
export const MAX_PROGRAM_BYTES = 4 * 1024 * 1024;

/** C0 and C1 control characters and DEL: never part of a file name or directory. */
const hasControlCharacter = (text: string): boolean =>
  [...text].some((ch) => {
    const code = ch.charCodeAt(0);
    return code < 0x20 || (code >= 0x7f && code <= 0x9f);
  });

/** A plain file name: it names a file in `dir`, never another directory. */
export function isSafeProgramName(name: string): boolean {
  return !name.includes('/') && !name.includes('\\') && !name.includes('..') && name !== '.' && !hasControlCharacter(name);
}

/** A controller directory without `..` segments, which would climb out of the directory given. */
function isSafeDir(dir: string): boolean {
  return !dir.split(/[\\/]/).includes('..') && !hasControlCharacter(dir);
}

const fileInput = {
  machineID: machineIdSchema.describe('the machine; GET /api/config/machines lists them'),
  dir: z
    .string()
    .min(1)
    .max(1024)
    .refine(isSafeDir, { error: "must be a controller directory without '..' segments or control characters, e.g. //CNC_MEM/USER/PATH1/" })
    .describe('directory on the controller, e.g. //CNC_MEM/USER/PATH1/'),
  name: z
    .string()
    .min(1)
    .max(255)
    .refine(isSafeProgramName, { error: "must be a plain file name: no '/', '\\', '..' or control characters" })
    .describe('program file name, e.g. O1000'),
};

/** The optional fencing token of a transfer (plugins/gateway-api/program-fences.ts): both fields or neither. */
const fenceInput = {
  fenceLease: z.string().min(1).max(200).optional().describe('fencing token: the lease under which the caller transfers (the program service sends its deployment id); give fenceEpoch with it'),
  fenceEpoch: queryInt().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('fencing token: the epoch the caller holds fenceLease with; a transfer under an epoch older than one seen for this machine file and lease is refused (2006)'),
};

/** Refuses half a fencing token. */
function checkFence(body: { fenceLease?: string | undefined; fenceEpoch?: number | undefined }, check: z.RefinementCtx): void {
  if ((body.fenceLease === undefined) === (body.fenceEpoch === undefined)) return;
  const missing = body.fenceLease === undefined ? 'fenceLease' : 'fenceEpoch';
  check.addIssue({ code: 'custom', path: [missing], input: undefined, message: 'a fencing token is fenceLease and fenceEpoch together; give both or neither' });
}

/** Fencing tokens announced in one call. */
export const FENCES_PER_CALL = 500;

const fencesInput = z
  .object({
    fences: z
      .array(z.object({ ...fileInput, fenceLease: fenceInput.fenceLease.unwrap(), fenceEpoch: fenceInput.fenceEpoch.unwrap() }).strict())
      .min(1)
      .max(FENCES_PER_CALL)
      .describe('the files, each with the fencing token its transfers will carry'),
  })
  .strict();

const sha256Output = z.string().regex(/^[0-9a-f]{64}$/);

/** The vault version an upload writes, as the program service names it; the gateway keeps it for the file once written. */
const vaultVersionInput = z
  .strictObject({
    program: z
      .string()
      .min(1)
      .max(255)
      .refine((text) => !hasControlCharacter(text), { error: 'must not contain control characters' })
      .describe("the program's name in the vault"),
    version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("the version's number in the vault"),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hexadecimal digits' }).describe("the version's content SHA-256, as the vault stores it"),
  })
  .optional()
  .describe('the vault version this file is, when the program service deploys one: once the machine took the file, the gateway keeps it for the file, and its MTConnect agent serves it while the machine runs the file');

const uploadInput = z
  .object({
    ...fileInput,
    ...fenceInput,
    vault: vaultVersionInput,
    content: z.string().optional().describe('the program as text, sent as its UTF-8 bytes; or give contentBase64'),
    contentBase64: programBytesInput('the program\'s bytes as base64, any bytes (Latin-1 comments, CR/LF/CRLF, tape characters); or give content').optional(),
  })
  .strict()
  .superRefine((body, check) => {
    const forms = 'accepted: {machineID, dir, name, content} or {machineID, dir, name, contentBase64}';
    if (body.content !== undefined && body.contentBase64 !== undefined) {
      check.addIssue({ code: 'custom', path: ['contentBase64'], input: body.contentBase64, message: `give content or contentBase64, not both; ${forms}` });
    } else if (body.content === undefined && body.contentBase64 === undefined) {
      check.addIssue({ code: 'custom', path: ['content'], input: undefined, message: `give content or contentBase64; ${forms}` });
    }
    checkFence(body, check);
  });

const downloadInput = z
  .object({
    ...fileInput,
    ...fenceInput,
    text: queryBool().default(true).describe('false leaves out content and encoding: only the bytes (contentBase64), for a client that wants nothing else'),
    bytes: queryBool().default(true).describe('false answers size and sha256 only: the file is read from the machine and hashed, not sent (a read-back that compares hashes)'),
  })
  .strict()
  .superRefine(checkFence);

const machineErrors = ['GENERAL_MACHINE_ID_NOT_EXISTED', 'DRIVER_FAMILY_UNSUPPORTED', 'MACHINE_NOT_CONNECTED', 'DRIVER_TIMEOUT', 'DRIVER_REQUEST_FAILED'] as const;

/** One machine's answer of the capabilities. */
export const programCapabilitySchema = z.strictObject({
  machineID: z.string(),
  programFiles: z.boolean().describe('whether the machine’s driver transfers program files (family programFiles)'),
  limitsKnown: z.boolean().describe('whether the driver could say which bytes it carries (its machine is online)'),
  refusedBytes: z.array(z.strictObject({ from: z.number().int(), to: z.number().int() })).describe('byte values the driver cannot carry, as inclusive ranges; empty when it carries every byte or when unknown'),
  reason: z.string().optional().describe('why a machine cannot take some or any program, or why its limits are unknown'),
});
export type ProgramCapability = z.output<typeof programCapabilitySchema>;

export const PROGRAM_FILES = {
  download: defineEntry({
    path: '/api/file/program/download',
    method: 'GET',
    summary: 'Downloads a program file from the machine: its bytes (contentBase64), its text (content, in the encoding named), size in bytes and sha256; with bytes=false only its size and sha256.',
    tags: ['program files'],
    input: downloadInput,
    output: z.strictObject({
      machineID: z.string(),
      dir: z.string(),
      name: z.string(),
      content: z.string().optional().describe('the program as text, unless text=false or bytes=false'),
      encoding: z.enum(['utf-8', 'windows-1252']).optional(),
      contentBase64: programBytesOutput.optional().describe('the program\'s bytes, as base64, unless bytes=false'),
      size: z.number().int(),
      sha256: sha256Output,
    }),
    errors: [...machineErrors, 'PROGRAM_NOT_FOUND', 'PROGRAM_TRANSFER_SUPERSEDED'],
  }),
  upload: defineEntry({
    path: '/api/file/program/upload',
    method: 'POST',
    summary: `Uploads a program file to the machine, as text (content) or any bytes (contentBase64), at most ${MAX_PROGRAM_BYTES} bytes, kept byte for byte; answers its size and sha256.`,
    tags: ['program files'],
    input: uploadInput,
    output: z.strictObject({ machineID: z.string(), dir: z.string(), name: z.string(), size: z.number().int(), sha256: sha256Output }),
    errors: [...machineErrors, 'PROGRAM_TRANSFER_SUPERSEDED'],
  }),
  fences: defineEntry({
    path: '/api/file/program/fences',
    method: 'POST',
    summary: `Announces fencing tokens for program files before transferring them, without contacting any machine: each is noted, or answered superseded when a newer epoch of its lease has been seen for its file (at most ${FENCES_PER_CALL} per call).`,
    tags: ['program files'],
    input: fencesInput,
    output: z.strictObject({
      fences: z.array(z.strictObject({
        machineID: z.string(),
        dir: z.string(),
        name: z.string(),
        fenceLease: z.string(),
        fenceEpoch: z.number().int(),
        superseded: z.boolean().describe('whether a newer epoch of fenceLease has been seen for this file: the fence was not noted'),
        highestEpoch: z.number().int().describe('the highest epoch of fenceLease seen for this file'),
      })).describe('one answer per fence announced, in order'),
    }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  capabilities: defineEntry({
    path: '/api/file/program/capabilities',
    method: 'GET',
    summary: 'What each active machine can take as a program file, without contacting it: whether its driver transfers program files, and which bytes it cannot carry unchanged, with the reason.',
    tags: ['program files'],
    input: z.object({ machineID: machineIdSchema.optional().describe('one machine; omit for every active machine') }).strict(),
    output: z.strictObject({ machines: z.array(programCapabilitySchema) }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
};
