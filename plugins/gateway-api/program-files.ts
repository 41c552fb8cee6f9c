/**
 * Program file transfer through the machine's driver (family programFiles):
 * download a program's bytes (and its text), upload one as text or as any
 * bytes, byte for byte; and what each machine's driver can carry
 * (program-capabilities.ts). The program version service deploys through
 * these. Names and directories are checked so that a request cannot step
 * outside the directory it names. Transfers of one machine file run one at a
 * time, and a caller's fencing token is checked (program-fences.ts). Every
 * upload the machine took leaves a ProgramVersion history row: the vault
 * version the file now is, when the upload named one, else none.
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { DriverClient } from '../../core/driver-seam/driver.js';
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import { sha256Hex } from '../../core/values/hash.js';
import {
  ProgramBytes, bytesOf, describeRefusedByte, findRefusedByte, programText, type ProgramEncoding,
} from '../../core/values/program-bytes.js';
import { MAX_PROGRAM_BYTES, PROGRAM_FILES } from '../../core/roles/gateway/contract/program-files.js';
import { PROGRAM_VERSION_CLASS, type ProgramVersionData } from '../../core/roles/gateway/history/program-version.js';
import { activeMachineSnapshot, requestMachine } from './machine-reads.js';
import { defineProgramCapabilities } from './program-capabilities.js';
import { ProgramFences } from './program-fences.js';

/**
 * Body limit of the upload interface: a 4 MiB program as base64 (4/3 of it,
 * about 5.4 MiB) with room for the other fields, or as text whose JSON
 * escapes (line breaks, quotes) add up to half again. docs/api.md.
 */
export const PROGRAM_UPLOAD_BODY_LIMIT = 6 * 1024 * 1024;

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

/** Keeps which vault version a program file now is, or that it is none (core/roles/gateway/history/program-version.ts). */
function recordProgramVersion(ctx: GatewayContext, machineID: string, data: ProgramVersionData): void {
  ctx.history.push({ machineID, cls: PROGRAM_VERSION_CLASS, ts: ctx.now(), data });
}

/** The fencing token a transfer's input carries (the contract refuses half of one), or none. */
const fenceOf = (body: { fenceLease?: string | undefined; fenceEpoch?: number | undefined }) =>
  body.fenceLease !== undefined && body.fenceEpoch !== undefined ? { lease: body.fenceLease, epoch: body.fenceEpoch } : undefined;

export function defineProgramFileInterfaces(ctx: GatewayContext): void {
  const fences = new ProgramFences();
  ctx.interfaces.implement(PROGRAM_FILES.download, {
    handler: ({ machineID, dir, name, text, bytes: withBytes, ...fence }, call) =>
      fences.run({ machineID, dir, name }, fenceOf(fence), () =>
        requestMachine(ctx, { machineID, family: 'programFiles', what: `download of ${quote(name)} from ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
          const bytes = await client.downloadProgram(dir, name);
          if (!withBytes) return { machineID, dir, name, size: bytes.length, sha256: sha256Hex(bytes) };
          return { machineID, dir, name, ...programAnswer(bytes, text) };
        })),
  });

  ctx.interfaces.implement(PROGRAM_FILES.upload, {
    bodyLimit: PROGRAM_UPLOAD_BODY_LIMIT,
    handler: ({ machineID, dir, name, content, contentBase64, vault, ...fence }, call) => {
      const program = programContent({ content, contentBase64 });
      return fences.run({ machineID, dir, name }, fenceOf(fence), () =>
        requestMachine(ctx, { machineID, family: 'programFiles', what: `upload of ${quote(name)} to ${quote(dir)}`, logger: call.logger }, async ({ client }) => {
          checkDriverCarries(client, machineID, program);
          await client.uploadProgram(dir, name, program.bytes);
          // Only a file the machine took: a refused upload (superseded, unreachable, a driver error) threw before this.
          // One without a vault version is recorded too: the file is no longer the version written before.
          recordProgramVersion(ctx, machineID, { dir, name, ...(vault ?? {}) });
          return { machineID, dir, name, size: program.bytes.length, sha256: sha256Hex(program.bytes) };
        }));
    },
  });

  ctx.interfaces.implement(PROGRAM_FILES.fences, {
    handler: ({ fences: list }) => {
      for (const f of list) activeMachineSnapshot(ctx, f.machineID);
      return {
        fences: list.map((f) => ({ ...f, ...fences.note({ machineID: f.machineID, dir: f.dir, name: f.name }, { lease: f.fenceLease, epoch: f.fenceEpoch }) })),
      };
    },
  });

  defineProgramCapabilities(ctx);
}
