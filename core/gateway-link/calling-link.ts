/**
 * What both links do with the gateway's answers. Every call names its entry
 * in the gateway's contract (core/roles/gateway/contract/), so its input and
 * its answer are typed by the entry: the two implementations differ only in
 * how a call travels (`call`), and the HTTP link parses the answer with the
 * entry's output schema, where the in-process one hands it on as it is.
 */
import type { EntryInput, EntryOutput, InterfaceEntry } from '../interfaces/registry.js';
import { isRecord } from '../values/json-value.js';
import { ProgramBytes } from '../values/program-bytes.js';
import { CONFIGURATION } from '../roles/gateway/contract/configuration.js';
import { HISTORY } from '../roles/gateway/contract/history.js';
import { LIVE_READS } from '../roles/gateway/contract/live-reads.js';
import { PROGRAM_FILES } from '../roles/gateway/contract/program-files.js';
import { SYSTEM } from '../roles/gateway/contract/system.js';
import { GatewayLinkError, type FencingToken, type LinkCurrentProgram, type LinkFence, type LinkFenceAnswer, type LinkGroup, type LinkHistoryRow, type LinkIdentity, type LinkMachine, type LinkProgramCapability, type LinkProgramFile, type LinkTransfer, type LinkVaultVersion } from './types.js';

/** Longest program directory taken from a gateway, as the service bounds a machine's programDir. */
const PROGRAM_DIR_MAX = 1024;

/** The program directory a machine's entry names in its driverOptions, when it names a usable one. */
function programDirOf(driverOptions: Record<string, unknown>): { programDir?: string } {
  const dir = driverOptions.programDir;
  if (typeof dir !== 'string' || dir.trim() === '' || dir.length > PROGRAM_DIR_MAX) return {};
  return { programDir: dir };
}

/** A fencing token as the transfer interfaces take it: two fields, so that it fits a query as well as a body. */
const fenceInput = (fence?: FencingToken): { fenceLease?: string; fenceEpoch?: number } => (fence ? { fenceLease: fence.lease, fenceEpoch: fence.epoch } : {});

/** A link that makes every call through `call`: the two implementations differ only in how. */
export abstract class CallingGatewayLink {
  /** Calls the interface of `entry` with `input`; answers its data, or throws a GatewayLinkError. */
  protected abstract call<E extends InterfaceEntry>(entry: E, input: EntryInput<E>): Promise<EntryOutput<E>>;

  async identity(): Promise<LinkIdentity> {
    const { gatewayID, name } = await this.call(SYSTEM.gatewayInfo, {});
    return { gatewayID, name };
  }

  async listMachines(): Promise<LinkMachine[]> {
    const machines = await this.call(CONFIGURATION.machines, {});
    return machines.map((m) => ({
      machineID: m.machineID, name: m.name, driver: m.driver, system: m.system, model: m.model, machineType: m.machineType, isActive: m.isActive, ...programDirOf(m.driverOptions),
    }));
  }

  async listGroups(): Promise<LinkGroup[]> {
    const groups = await this.call(CONFIGURATION.groups, {});
    return groups.map((g) => ({ groupID: g.groupID, name: g.name, isActive: g.isActive, machineIDs: g.machineIDs }));
  }

  async listPrograms(machineID: string, dir?: string): Promise<LinkProgramFile[]> {
    return (await this.call(LIVE_READS.readProgramList, { machineID, ...(dir ? { dirAtCNC: dir } : {}) })).programs;
  }

  async uploadProgram(machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken, vault?: LinkVaultVersion): Promise<LinkTransfer> {
    const { size, sha256 } = await this.call(PROGRAM_FILES.upload, { machineID, dir, name, contentBase64: new ProgramBytes(content), ...fenceInput(fence), ...(vault ? { vault } : {}) });
    return { size, sha256 };
  }

  async downloadProgram(machineID: string, dir: string, name: string, fence?: FencingToken): Promise<{ content: Buffer } & LinkTransfer> {
    // Only the bytes: the service has no use for the text.
    const { contentBase64, size, sha256 } = await this.call(PROGRAM_FILES.download, { machineID, dir, name, text: false, ...fenceInput(fence) });
    if (!contentBase64) throw new GatewayLinkError('failed', 'the gateway answered the downloaded program without its bytes');
    const content = contentBase64.bytes;
    if (content.length !== size) throw new GatewayLinkError('failed', `the gateway answered the downloaded program with ${content.length} bytes, but a size of ${size}`);
    return { content, size, sha256 };
  }

  async programHash(machineID: string, dir: string, name: string, fence?: FencingToken): Promise<LinkTransfer> {
    // The file is read from the machine and hashed there; its bytes do not travel.
    const { size, sha256 } = await this.call(PROGRAM_FILES.download, { machineID, dir, name, text: false, bytes: false, ...fenceInput(fence) });
    return { size, sha256 };
  }

  async announceFences(fences: readonly LinkFence[]): Promise<LinkFenceAnswer[]> {
    const { fences: answers } = await this.call(PROGRAM_FILES.fences, {
      fences: fences.map((f) => ({ machineID: f.machineID, dir: f.dir, name: f.name, fenceLease: f.fence.lease, fenceEpoch: f.fence.epoch })),
    });
    if (answers.length !== fences.length) throw new GatewayLinkError('failed', `the gateway answered ${answers.length} fences for the ${fences.length} announced`);
    return answers.map((a) => ({ superseded: a.superseded, highestEpoch: a.highestEpoch }));
  }

  async currentProgram(machineID: string): Promise<LinkCurrentProgram> {
    const { dir, name, sha256, block } = await this.call(LIVE_READS.readCurrentProgram, { machineID });
    return { dir, name, sha256, ...(block !== undefined ? { block } : {}) };
  }

  async programCapabilities(machineID?: string): Promise<LinkProgramCapability[]> {
    return (await this.call(PROGRAM_FILES.capabilities, machineID !== undefined ? { machineID } : {})).machines;
  }

  async history(machineID: string, type: string, start: number, end: number, limit: number, afterSeq?: number): Promise<{ rows: LinkHistoryRow[]; limitReached: boolean }> {
    const answer = await this.call(HISTORY.machine, {
      machineID, type, start: new Date(start).toISOString(), end: new Date(end).toISOString(), limit, ...(afterSeq !== undefined ? { afterSeq } : {}),
    });
    const rows = answer.data.map((r) => ({ seq: r.seq, time: r.time, data: isRecord(r.data) ? r.data : {} }));
    return { rows, limitReached: answer.limitReached };
  }
}
