/**
 * The gateway interfaces a link calls, and how their answers and errors map
 * to the link's types. Shared by both implementations, so they cannot
 * disagree on paths, inputs or error meaning.
 */
import { createHash } from 'node:crypto';
import { GatewayLinkError, type GatewayLinkFailure, type LinkCurrentProgram, type LinkGroup, type LinkHistoryRow, type LinkMachine, type LinkProgramFile, type LinkTransfer } from './types.js';

/** errorCode → what a caller can do about it (core/errors.ts is the table). */
const FAILURE_BY_CODE: Record<number, GatewayLinkFailure> = {
  2: 'rejected', 11: 'rejected', 15: 'rejected',
  3: 'unauthorized', 4: 'unauthorized', 5: 'unauthorized', 7: 'unauthorized',
  6: 'not-found', 13: 'not-found', 2005: 'not-found', 10003: 'not-found', 10005: 'not-found',
  2001: 'unsupported',
  2002: 'machine-unavailable', 2004: 'machine-unavailable', 10002: 'machine-unavailable',
  8: 'unreachable', 9: 'unreachable', 20001: 'unreachable',
};

/** Characters of a gateway's message kept in a link error. */
const MESSAGE_MAX = 300;

export function linkError(errorCode: number, message: string): GatewayLinkError {
  const text = message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message;
  return new GatewayLinkError(FAILURE_BY_CODE[errorCode] ?? 'failed', text, errorCode);
}

/** One interface call: method, path and input (query for GET, JSON body for POST). */
export interface LinkCall<T> {
  method: 'GET' | 'POST';
  path: `/api/${string}`;
  input: Record<string, string | number | boolean | undefined>;
  /** Turns the interface's `data` into the link's answer; throws GatewayLinkError('failed') on a shape it does not know. */
  read(data: unknown): T;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const unexpected = (what: string): GatewayLinkError => new GatewayLinkError('failed', `the gateway answered ${what} in a form this service does not know`);
const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw unexpected(what);
  return v;
};
const num = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw unexpected(what);
  return v;
};

export const sha256Hex = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export const CALLS = {
  machines: (): LinkCall<LinkMachine[]> => ({
    method: 'GET', path: '/api/config/machines', input: {},
    read: (data) => {
      if (!Array.isArray(data)) throw unexpected('its machines');
      return data.filter(isRecord).map((m) => ({
        machineID: str(m.machineID, 'a machine'), name: str(m.name, 'a machine name'), driver: String(m.driver ?? ''), system: String(m.system ?? ''),
        model: String(m.model ?? ''), machineType: String(m.machineType ?? ''), isActive: m.isActive !== false,
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
  upload: (machineID: string, dir: string, name: string, content: Buffer): LinkCall<LinkTransfer> => ({
    method: 'POST', path: '/api/file/program/upload', input: { machineID, dir, name, contentBase64: content.toString('base64') },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the upload');
      return { size: num(data.size, 'the uploaded size'), sha256: str(data.sha256, 'the uploaded hash') };
    },
  }),
  download: (machineID: string, dir: string, name: string): LinkCall<{ content: Buffer } & LinkTransfer> => ({
    method: 'GET', path: '/api/file/program/download', input: { machineID, dir, name },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the download');
      const content = Buffer.from(str(data.content, 'the program content'), 'utf8');
      return { content, size: content.length, sha256: sha256Hex(content) };
    },
  }),
  current: (machineID: string): LinkCall<LinkCurrentProgram> => ({
    method: 'GET', path: '/api/cnc/readCurrentProgram', input: { machineID },
    read: (data) => {
      if (!isRecord(data)) throw unexpected('the current program');
      return {
        dir: str(data.dir, 'the current directory'), name: str(data.name, 'the current program'), sha256: sha256Hex(Buffer.from(str(data.content, 'the current content'), 'utf8')),
        ...(typeof data.block === 'number' ? { block: data.block } : {}),
      };
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

  listMachines() {
    return this.call(CALLS.machines());
  }

  listGroups() {
    return this.call(CALLS.groups());
  }

  listPrograms(machineID: string, dir?: string) {
    return this.call(CALLS.programs(machineID, dir));
  }

  uploadProgram(machineID: string, dir: string, name: string, content: Buffer) {
    return this.call(CALLS.upload(machineID, dir, name, content));
  }

  downloadProgram(machineID: string, dir: string, name: string) {
    return this.call(CALLS.download(machineID, dir, name));
  }

  currentProgram(machineID: string) {
    return this.call(CALLS.current(machineID));
  }

  history(machineID: string, type: string, start: number, end: number, limit: number, afterSeq?: number) {
    return this.call(CALLS.history(machineID, type, start, end, limit, afterSeq));
  }
}
