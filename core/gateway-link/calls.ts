/**
 * The gateway interfaces a link calls, and how their answers and errors map
 * to the link's types. Shared by both implementations, so they cannot
 * disagree on paths, inputs or error meaning.
 */
import { isRecord } from '../json-value.js';
import { ProgramBytes } from '../program-bytes.js';
import { GatewayLinkError, type FencingToken, type GatewayLinkFailure, type LinkFence, type LinkFenceAnswer, type LinkCurrentProgram, type LinkGroup, type LinkHistoryRow, type LinkIdentity, type LinkMachine, type LinkProgramCapability, type LinkProgramFile, type LinkTransfer } from './types.js';

/** errorCode → what a caller can do about it (core/errors.ts is the table). */
const FAILURE_BY_CODE: Record<number, GatewayLinkFailure> = {
  2: 'rejected', 11: 'rejected', 15: 'rejected',
  3: 'unauthorized', 4: 'unauthorized', 5: 'unauthorized', 7: 'unauthorized',
  6: 'not-found', 13: 'not-found', 2005: 'not-found', 10003: 'not-found', 10005: 'not-found',
  2001: 'unsupported',
  2006: 'superseded',
  2002: 'machine-unavailable', 2004: 'machine-unavailable', 10002: 'machine-unavailable',
  8: 'unreachable', 9: 'unreachable', 20001: 'unreachable',
};

/** Characters of a gateway's message kept in a link error. */
const MESSAGE_MAX = 300;

export function linkError(errorCode: number, message: string): GatewayLinkError {
  const text = message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message;
  return new GatewayLinkError(FAILURE_BY_CODE[errorCode] ?? 'failed', text, errorCode);
}

/** One interface call: method, path and input (query for GET, JSON body for POST; program bytes as they are in the process, base64 in JSON; lists in POST bodies only). */
export interface LinkCall<T> {
  method: 'GET' | 'POST';
  path: `/api/${string}`;
  input: Record<string, string | number | boolean | ProgramBytes | undefined | readonly Record<string, string | number>[]>;
  /** Turns the interface's `data` into the link's answer; throws GatewayLinkError('failed') on a shape it does not know. */
  read(data: unknown): T;
}

const unexpected = (what: string): GatewayLinkError => new GatewayLinkError('failed', `the gateway answered ${what} in a form this service does not know`);
const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw unexpected(what);
  return v;
};
const num = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw unexpected(what);
  return v;
};

const sha = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v)) throw unexpected(what);
  return v;
};

/**
 * A program's bytes from an answer, with the gateway's size and SHA-256 (each
 * hash is computed once, where the bytes are read). In the process they come
 * as they are; over HTTP as base64, checked against the size given.
 */
function programOf(data: Record<string, unknown>, what: string): { content: Buffer } & LinkTransfer {
  const field = data.contentBase64;
  const content = field instanceof ProgramBytes ? field.bytes : Buffer.from(str(field, what), 'base64');
  const size = num(data.size, `${what}'s size`);
  if (content.length !== size) throw new GatewayLinkError('failed', `the gateway answered ${what} with ${content.length} bytes, but a size of ${size}`);
  return { content, size, sha256: sha(data.sha256, `${what}'s SHA-256`) };
}

/** Longest program directory taken from a gateway, as the service bounds a machine's programDir. */
const PROGRAM_DIR_MAX = 1024;

/** The program directory a machine's entry names in its driverOptions, when it names a usable one. */
function programDirOf(m: Record<string, unknown>): { programDir?: string } {
  const dir = isRecord(m.driverOptions) ? m.driverOptions.programDir : undefined;
  if (typeof dir !== 'string' || dir.trim() === '' || dir.length > PROGRAM_DIR_MAX) return {};
  return { programDir: dir };
}

/** A fencing token as the transfer interfaces take it: two fields, so that it fits a query as well as a body. */
const fenceInput = (fence?: FencingToken): { fenceLease?: string; fenceEpoch?: number } => (fence ? { fenceLease: fence.lease, fenceEpoch: fence.epoch } : {});

export const CALLS = {
  identity: (): LinkCall<LinkIdentity> => ({
    method: 'GET', path: '/api/system/gateway-info', input: {},
    read: (data) => {
      if (!isRecord(data)) throw unexpected('its identity');
      return { gatewayID: str(data.gatewayID, 'its gatewayID'), name: str(data.name, 'its name') };
    },
  }),
  machines: (): LinkCall<LinkMachine[]> => ({
    method: 'GET', path: '/api/config/machines', input: {},
    read: (data) => {
      if (!Array.isArray(data)) throw unexpected('its machines');
      return data.filter(isRecord).map((m) => ({
        machineID: str(m.machineID, 'a machine'), name: str(m.name, 'a machine name'), driver: String(m.driver ?? ''), system: String(m.system ?? ''),
        model: String(m.model ?? ''), machineType: String(m.machineType ?? ''), isActive: m.isActive !== false, ...programDirOf(m),
      }));
    },
  }),
  groups: (): LinkCall<LinkGroup[]> => ({
    method: 'GET', path: '/api/config/groups', input: {},
    read: (data) => {
      if (!Array.isArray(data)) throw unexpected('its groups');
      return data.filter(isRecord).map((g) => ({
        groupID: str(g.groupID, 'a group'), name: str(g.name, 'a group name'), isActive: g.isActive !== false,
        machineIDs: Array.isArray(g.machineIDs) ? g.machineIDs.filter((id): id is string => typeof id === 'string') : [],
      }));
    },
  }),
  programs: (machineID: string, dir?: string): LinkCall<LinkProgramFile[]> => ({
    method: 'GET', path: '/api/cnc/readProgramList', input: { machineID, ...(dir ? { dirAtCNC: dir } : {}) },
    read: (data) => {
      const programs = isRecord(data) ? data.programs : undefined;
      if (!Array.isArray(programs)) throw unexpected('the program list');
      return programs.filter(isRecord).map((p) => ({
        dir: str(p.dir, 'a program directory'), name: str(p.name, 'a program name'), size: num(p.size, 'a program size'),
        ...(typeof p.modified === 'number' ? { modified: p.modified } : {}), ...(typeof p.comment === 'string' ? { comment: p.comment } : {}),
      }));
    },
  }),
  upload: (machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken): LinkCall<LinkTransfer> => ({
    method: 'POST', path: '/api/file/program/upload', input: { machineID, dir, name, contentBase64: new ProgramBytes(content), ...fenceInput(fence) },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the upload');
      return { size: num(data.size, 'the uploaded size'), sha256: sha(data.sha256, 'the uploaded hash') };
    },
  }),
  download: (machineID: string, dir: string, name: string, fence?: FencingToken): LinkCall<{ content: Buffer } & LinkTransfer> => ({
    // Only the bytes: the service has no use for the text.
    method: 'GET', path: '/api/file/program/download', input: { machineID, dir, name, text: false, ...fenceInput(fence) },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the download');
      return programOf(data, 'the downloaded program');
    },
  }),
  hash: (machineID: string, dir: string, name: string, fence?: FencingToken): LinkCall<LinkTransfer> => ({
    // The file is read from the machine and hashed there; its bytes do not travel.
    method: 'GET', path: '/api/file/program/download', input: { machineID, dir, name, text: false, bytes: false, ...fenceInput(fence) },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the read-back');
      return { size: num(data.size, 'the size read back'), sha256: sha(data.sha256, 'the hash read back') };
    },
  }),
  fences: (fences: readonly LinkFence[]): LinkCall<LinkFenceAnswer[]> => ({
    method: 'POST', path: '/api/file/program/fences',
    input: { fences: fences.map((f) => ({ machineID: f.machineID, dir: f.dir, name: f.name, fenceLease: f.fence.lease, fenceEpoch: f.fence.epoch })) },
    read: (data) => {
      const answers = isRecord(data) ? data.fences : undefined;
      if (!Array.isArray(answers) || answers.length !== fences.length) throw unexpected('the fences');
      return answers.map((a) => {
        if (!isRecord(a)) throw unexpected('a fence');
        return { superseded: a.superseded === true, highestEpoch: num(a.highestEpoch, 'a fence\'s epoch') };
      });
    },
  }),
  current: (machineID: string): LinkCall<LinkCurrentProgram> => ({
    method: 'GET', path: '/api/cnc/readCurrentProgram', input: { machineID },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the current program');
      return {
        dir: str(data.dir, 'the current directory'), name: str(data.name, 'the current program'), sha256: sha(data.sha256, 'the current program\'s SHA-256'),
        ...(typeof data.block === 'number' ? { block: data.block } : {}),
      };
    },
  }),
  capabilities: (machineID?: string): LinkCall<LinkProgramCapability[]> => ({
    method: 'GET', path: '/api/file/program/capabilities', input: { machineID },
    read: (data) => {
      const machines = isRecord(data) ? data.machines : undefined;
      if (!Array.isArray(machines)) throw unexpected('the program capabilities');
      return machines.filter(isRecord).map((m) => ({
        machineID: str(m.machineID, 'a machine'), programFiles: m.programFiles !== false, limitsKnown: m.limitsKnown === true,
        refusedBytes: (Array.isArray(m.refusedBytes) ? m.refusedBytes : []).filter(isRecord).map((r) => ({ from: num(r.from, 'a refused byte'), to: num(r.to, 'a refused byte') })),
        ...(typeof m.reason === 'string' ? { reason: m.reason } : {}),
      }));
    },
  }),
  history: (machineID: string, type: string, start: number, end: number, limit: number, afterSeq?: number): LinkCall<{ rows: LinkHistoryRow[]; limitReached: boolean }> => ({
    method: 'GET', path: '/api/history/machine',
    input: { machineID, type, start: new Date(start).toISOString(), end: new Date(end).toISOString(), limit, ...(afterSeq !== undefined ? { afterSeq } : {}) },
    read: (data) => {
      if (!isRecord(data) || !Array.isArray(data.data)) throw unexpected('the history');
      const rows = data.data.filter(isRecord).map((r) => ({ seq: num(r.seq, 'a history seq'), time: num(r.time, 'a history time'), data: isRecord(r.data) ? r.data : {} }));
      return { rows, limitReached: data.limitReached === true };
    },
  }),
};

/** A link that makes every call through `call`: the two implementations differ only in how. */
export abstract class CallingGatewayLink {
  protected abstract call<T>(call: LinkCall<T>): Promise<T>;

  identity() {
    return this.call(CALLS.identity());
  }

  listMachines() {
    return this.call(CALLS.machines());
  }

  listGroups() {
    return this.call(CALLS.groups());
  }

  listPrograms(machineID: string, dir?: string) {
    return this.call(CALLS.programs(machineID, dir));
  }

  uploadProgram(machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken) {
    return this.call(CALLS.upload(machineID, dir, name, content, fence));
  }

  downloadProgram(machineID: string, dir: string, name: string, fence?: FencingToken) {
    return this.call(CALLS.download(machineID, dir, name, fence));
  }

  programHash(machineID: string, dir: string, name: string, fence?: FencingToken) {
    return this.call(CALLS.hash(machineID, dir, name, fence));
  }

  announceFences(fences: readonly LinkFence[]) {
    return this.call(CALLS.fences(fences));
  }

  currentProgram(machineID: string) {
    return this.call(CALLS.current(machineID));
  }

  programCapabilities(machineID?: string) {
    return this.call(CALLS.capabilities(machineID));
  }

  history(machineID: string, type: string, start: number, end: number, limit: number, afterSeq?: number) {
    return this.call(CALLS.history(machineID, type, start, end, limit, afterSeq));
  }
}
