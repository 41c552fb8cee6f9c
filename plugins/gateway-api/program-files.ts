/**
 * Program file transfer through the machine's driver (family programFiles):
 * download a program's bytes (and its text), upload one as text or as any
 * bytes, byte for byte; and what each machine's driver can carry
 * (program-capabilities.ts). The program version service deploys through
 * these. Names and directories are checked so that a request cannot step
 * outside the directory it names. Transfers of one machine file run one at a
 * time, and a caller's fencing token is checked (program-fences.ts).
 */
import { z } from 'zod';
import { machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { DriverClient } from '../../core/driver.js';
import { GatewayError, quote } from '../../core/errors.js';
import { queryBool, queryInt } from '../../core/interfaces.js';
import { sha256Hex } from '../../core/hash.js';
import {
  ProgramBytes, bytesOf, describeRefusedByte, findRefusedByte, programBytesInput, programText, type ProgramEncoding,
} from '../../core/program-bytes.js';
import { activeMachineSnapshot, requestMachine } from './machine-reads.js';
import { defineProgramCapabilities } from './program-capabilities.js';
import { ProgramFences } from './program-fences.js';

/** Largest program accepted for upload, in bytes after decoding. */
export const MAX_PROGRAM_BYTES = 4 * 1024 * 1024;

/**
 * Body limit of the upload interface: a 4 MiB program as base64 (4/3 of it,
 * about 5.4 MiB) with room for the other fields, or as text whose JSON
 * escapes (line breaks, quotes) add up to half again. docs/api.md.
 */
export const PROGRAM_UPLOAD_BODY_LIMIT = 6 * 1024 * 1024;

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

/** The optional fencing token of a transfer (program-fences.ts): both fields or neither. */
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

const fenceOf = (body: { fenceLease?: string | undefined; fenceEpoch?: number | undefined }) =>
  body.fenceLease !== undefined && body.fenceEpoch !== undefined ? { lease: body.fenceLease, epoch: body.fenceEpoch } : undefined;

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

const uploadInput = z
  .object({
    ...fileInput,
    ...fenceInput,
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

/** The upload's exact bytes and the field they came from; the size limit applies to the bytes. */
function programContent(body: { content?: string | undefined; contentBase64?: string | ProgramBytes | undefined }): { bytes: Buffer; field: string } {
  const field = body.contentBase64 !== undefined ? 'contentBase64' : 'content';
  const bytes = body.contentBase64 !== undefined ? bytesOf(body.contentBase64) : Buffer.from(body.content ?? '', 'utf8');
  if (bytes.length > MAX_PROGRAM_BYTES) {
    throw new GatewayError('INVALID_PARAMETER', `${field}: found ${bytes.length} bytes; accepted: at most ${MAX_PROGRAM_BYTES} bytes (4 MiB)`);
  }
  return { bytes, field };
}

/** Refuses, before anything is sent, a program with a byte the machine's driver cannot carry; names the byte, where it is and why. */
function checkDriverCarries(client: DriverClient, machineID: string, program: { bytes: Buffer; field: string }): void {
  const limits = client.programByteLimits?.() ?? null;
  const refused = findRefusedByte(program.bytes, limits);
  if (refused && limits) {
    throw new GatewayError('INVALID_PARAMETER', `${program.field}: ${describeRefusedByte(refused)} cannot reach machine ${quote(machineID)}: ${limits.reason}`);
  }
}

/** The bytes as an answer gives them: always as bytes (base64 in JSON), and as text unless the caller declined it. */
export function programAnswer(bytes: Buffer, withText = true): { content?: string; encoding?: ProgramEncoding; contentBase64: ProgramBytes; size: number; sha256: string } {
  const text = withText ? programText(bytes) : undefined;
  return { ...(text ? { content: text.text, encoding: text.encoding } : {}), contentBase64: new ProgramBytes(bytes), size: bytes.length, sha256: sha256Hex(bytes) };
}

export function defineProgramFileInterfaces(ctx: GatewayContext): void {
  const fences = new ProgramFences();
  ctx.interfaces.define({
    path: '/api/file/program/download',
    method: 'GET',
    summary: 'Downloads a program file from the machine: its bytes (contentBase64), its text (content, in the encoding named), size in bytes and sha256; with bytes=false only its size and sha256.',
    tags: ['program files'],
    input: downloadInput,
    handler: ({ machineID, dir, name, text, bytes: withBytes, ...fence }, call) =>
      fences.run({ machineID, dir, name }, fenceOf(fence), () =>
        requestMachine(ctx, { machineID, family: 'programFiles', what: `download of ${quote(name)} from ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
          const bytes = await client.downloadProgram(dir, name);
          if (!withBytes) return { machineID, dir, name, size: bytes.length, sha256: sha256Hex(bytes) };
          return { machineID, dir, name, ...programAnswer(bytes, text) };
        })),
  });

  ctx.interfaces.define({
    path: '/api/file/program/upload',
    method: 'POST',
    summary: `Uploads a program file to the machine, as text (content) or any bytes (contentBase64), at most ${MAX_PROGRAM_BYTES} bytes, kept byte for byte; answers its size and sha256.`,
    tags: ['program files'],
    bodyLimit: PROGRAM_UPLOAD_BODY_LIMIT,
    input: uploadInput,
    handler: ({ machineID, dir, name, content, contentBase64, ...fence }, call) => {
      const program = programContent({ content, contentBase64 });
      return fences.run({ machineID, dir, name }, fenceOf(fence), () =>
        requestMachine(ctx, { machineID, family: 'programFiles', what: `upload of ${quote(name)} to ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
          checkDriverCarries(client, machineID, program);
          await client.uploadProgram(dir, name, program.bytes);
          return { machineID, dir, name, size: program.bytes.length, sha256: sha256Hex(program.bytes) };
        }));
    },
  });

  ctx.interfaces.define({
    path: '/api/file/program/fences',
    method: 'POST',
    summary: `Announces fencing tokens for program files before transferring them, without contacting any machine: each is noted, or answered superseded when a newer epoch of its lease has been seen for its file (at most ${FENCES_PER_CALL} per call).`,
    tags: ['program files'],
    input: fencesInput,
    handler: ({ fences: list }) => {
      for (const f of list) activeMachineSnapshot(ctx, f.machineID);
      return {
        fences: list.map((f) => ({ ...f, ...fences.note({ machineID: f.machineID, dir: f.dir, name: f.name }, { lease: f.fenceLease, epoch: f.fenceEpoch }) })),
      };
    },
  });

  defineProgramCapabilities(ctx);
}
