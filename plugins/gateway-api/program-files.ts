/**
 * Program file transfer through the machine's driver (family programFiles):
 * download a program's text, upload one as text or base64. The program
 * version service deploys through these. Names and directories are checked
 * so that a request cannot step outside the directory it names.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { machineIdSchema } from '../../config/schema.js';
import type { GatewayContext } from '../../core/context.js';
import { GatewayError, quote } from '../../core/errors.js';
import { requestMachine } from './machine-reads.js';

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

const uploadInput = z
  .object({
    ...fileInput,
    content: z.string().optional().describe('the program as text; or give contentBase64'),
    contentBase64: z.base64().optional().describe('the program as base64 of UTF-8 text; or give content'),
  })
  .strict()
  .superRefine((body, check) => {
    const forms = 'accepted: {machineID, dir, name, content} or {machineID, dir, name, contentBase64}';
    if (body.content !== undefined && body.contentBase64 !== undefined) {
      check.addIssue({ code: 'custom', path: ['contentBase64'], input: body.contentBase64, message: `give content or contentBase64, not both; ${forms}` });
    } else if (body.content === undefined && body.contentBase64 === undefined) {
      check.addIssue({ code: 'custom', path: ['content'], input: undefined, message: `give content or contentBase64; ${forms}` });
    }
  });

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

// Fatal: a program that is not UTF-8 text would be changed by the string round trip. The BOM is kept as content.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The upload's text and its exact bytes; the size limit applies to the decoded bytes. */
function programContent(body: { content?: string | undefined; contentBase64?: string | undefined }): { text: string; bytes: Buffer } {
  const field = body.contentBase64 !== undefined ? 'contentBase64' : 'content';
  const bytes = body.contentBase64 !== undefined ? Buffer.from(body.contentBase64, 'base64') : Buffer.from(body.content ?? '', 'utf8');
  if (bytes.length > MAX_PROGRAM_BYTES) {
    throw new GatewayError('INVALID_PARAMETER', `${field}: found ${bytes.length} bytes; accepted: at most ${MAX_PROGRAM_BYTES} bytes (4 MiB)`);
  }
  if (body.contentBase64 === undefined) return { text: body.content ?? '', bytes };
  try {
    return { text: utf8.decode(bytes), bytes };
  } catch {
    throw new GatewayError('INVALID_PARAMETER', 'contentBase64: found bytes that are not UTF-8 text; accepted: base64 of a UTF-8 text program');
  }
}

export function defineProgramFileInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.define({
    path: '/api/file/program/download',
    method: 'GET',
    summary: 'Downloads a program file from the machine: its content, size in bytes and sha256.',
    tags: ['program files'],
    input: z.object(fileInput).strict(),
    handler: ({ machineID, dir, name }, call) =>
      requestMachine(ctx, { machineID, family: 'programFiles', what: `download of ${quote(name)} from ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
        const content = await client.downloadProgram(dir, name);
        const bytes = Buffer.from(content, 'utf8');
        return { machineID, dir, name, content, size: bytes.length, sha256: sha256(bytes) };
      }),
  });

  ctx.interfaces.define({
    path: '/api/file/program/upload',
    method: 'POST',
    summary: `Uploads a program file to the machine, as text (content) or base64 (contentBase64), at most ${MAX_PROGRAM_BYTES} bytes; answers its size and sha256.`,
    tags: ['program files'],
    bodyLimit: PROGRAM_UPLOAD_BODY_LIMIT,
    input: uploadInput,
    handler: ({ machineID, dir, name, content, contentBase64 }, call) => {
      const program = programContent({ content, contentBase64 });
      return requestMachine(ctx, { machineID, family: 'programFiles', what: `upload of ${quote(name)} to ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
        await client.uploadProgram(dir, name, program.text);
        return { machineID, dir, name, size: program.bytes.length, sha256: sha256(program.bytes) };
      });
    },
  });
}
