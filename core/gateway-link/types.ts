/**
 * How the program service reaches a machine gateway: one seam, two
 * implementations that pass the same contract tests — in-process for the
 * gateway running in the same process (no key on disk, an internal
 * principal), and HTTP with a secret key for a remote one. Every call goes
 * through the gateway's interfaces, so its checks (permissions, drivers'
 * families, file-name rules) apply either way.
 */

/** A machine as the gateway describes it (credentials never included). */
export interface LinkMachine {
  machineID: string;
  name: string;
  driver: string;
  system: string;
  model: string;
  machineType: string;
  isActive: boolean;
  /**
   * The machine's program directory on its controller, when its gateway names
   * one (`driverOptions.programDir` of the machine's entry: simulator, focas);
   * absent otherwise.
   */
  programDir?: string;
}

export interface LinkGroup {
  groupID: string;
  name: string;
  isActive: boolean;
  machineIDs: string[];
}

export interface LinkProgramFile {
  dir: string;
  name: string;
  size: number;
  /** Unix ms, when the controller reports it. */
  modified?: number;
  comment?: string;
}

export interface LinkTransfer {
  size: number;
  sha256: string;
}

export interface LinkCurrentProgram {
  dir: string;
  name: string;
  sha256: string;
  block?: number;
}

/** What a machine can take as a program file, as its gateway says before any transfer. */
export interface LinkProgramCapability {
  machineID: string;
  /** Whether its driver transfers program files at all. */
  programFiles: boolean;
  /** Whether the driver said which bytes it carries (false while the machine is offline). */
  limitsKnown: boolean;
  /** Byte values it cannot carry unchanged, as inclusive ranges. */
  refusedBytes: { from: number; to: number }[];
  /** Why it cannot take some or any program, or why that is not known. */
  reason?: string;
}

/** One history row of a machine, as the gateway recorded it. */
export interface LinkHistoryRow {
  seq: number;
  /** Unix ms, the gateway's clock when it recorded the row. */
  time: number;
  data: Record<string, unknown>;
}

/** Who a gateway is, as it says itself (`/api/system/gateway-info`). */
export interface LinkIdentity {
  /** Its stable identity: a UUID made at its first start and kept in its data directory (`gateway-id`). */
  gatewayID: string;
  /** Its configured name (`gateway.name`). */
  name: string;
}

/**
 * A fencing token sent with a program transfer: the lease under which the
 * caller transfers (the program service sends the deployment's id) and the
 * epoch it holds that lease with, which grows with every new holder. The
 * gateway refuses a transfer of a machine file whose epoch is older than one
 * it has seen for that file and lease (docs/api.md, "Fencing").
 */
export interface FencingToken {
  lease: string;
  epoch: number;
}

/** The vault version a program file is, sent with its upload: the program's name in the vault, the version's number and its content SHA-256. */
export interface LinkVaultVersion {
  program: string;
  version: number;
  sha256: string;
}

/** A program file with the fencing token its transfers will carry, as announced before them. */
export interface LinkFence {
  machineID: string;
  dir: string;
  name: string;
  fence: FencingToken;
}

/** What the gateway answered for an announced fence: whether a newer epoch of its lease was seen for its file, and the highest seen. */
export interface LinkFenceAnswer {
  superseded: boolean;
  highestEpoch: number;
}

/** Why a call through a link failed; `kind` says what a caller may do about it. */
export type GatewayLinkFailure =
  /** The gateway did not answer (refused, timed out, DNS): retry later. */
  | 'unreachable'
  /** The gateway refused the credentials (401) or the key lacks the interface (403): fix the key. */
  | 'unauthorized'
  /** The gateway answered that the machine or file does not exist. */
  | 'not-found'
  /** The machine's driver cannot do this (no program files): a permanent answer for this machine. */
  | 'unsupported'
  /** The machine did not answer in time, or is offline: retry later. */
  | 'machine-unavailable'
  /** The request was refused as invalid (a name, a size): permanent. */
  | 'rejected'
  /** The gateway has seen a newer epoch of the caller's fencing token for this machine file: another holder has the transfer; stop. */
  | 'superseded'
  /** Anything else the gateway reported. */
  | 'failed';

export class GatewayLinkError extends Error {
  constructor(
    readonly kind: GatewayLinkFailure,
    message: string,
    /** The gateway's errorCode, when it answered with one. */
    readonly errorCode?: number,
  ) {
    super(message);
    this.name = 'GatewayLinkError';
  }

  /** Whether the same call may succeed later. */
  get transient(): boolean {
    return this.kind === 'unreachable' || this.kind === 'machine-unavailable';
  }
}

export interface GatewayLink {
  /** `in-process`, or the gateway's base URL. */
  readonly target: string;
  /** Who the gateway at the other end is: its stable gatewayID and its name. */
  identity(): Promise<LinkIdentity>;
  listMachines(): Promise<LinkMachine[]>;
  listGroups(): Promise<LinkGroup[]>;
  listPrograms(machineID: string, dir?: string): Promise<LinkProgramFile[]>;
  /**
   * With `fence`, refused (kind `superseded`) when the gateway has seen a newer epoch of its lease for this machine file;
   * with `vault`, the gateway keeps which vault version the file is once the machine took it.
   */
  uploadProgram(machineID: string, dir: string, name: string, content: Buffer, fence?: FencingToken, vault?: LinkVaultVersion): Promise<LinkTransfer>;
  /** With `fence`, as `uploadProgram`: a read under a superseded epoch is refused too. */
  downloadProgram(machineID: string, dir: string, name: string, fence?: FencingToken): Promise<{ content: Buffer } & LinkTransfer>;
  /** A read-back that compares hashes: the gateway reads the file from the machine and answers its size and SHA-256, not its bytes; `fence` as for a download. */
  programHash(machineID: string, dir: string, name: string, fence?: FencingToken): Promise<LinkTransfer>;
  /**
   * Announces fencing tokens before the transfers that will carry them (at
   * most 500 at once), without contacting any machine: from then on the
   * gateway refuses transfers of those files under older epochs of the same
   * leases. Answers one entry per fence, in order.
   */
  announceFences(fences: readonly LinkFence[]): Promise<LinkFenceAnswer[]>;
  currentProgram(machineID: string): Promise<LinkCurrentProgram>;
  /** What each active machine (or the one named) can take as a program file; the gateway does not contact the machines. */
  programCapabilities(machineID?: string): Promise<LinkProgramCapability[]>;
  /**
   * History rows of one class (`Count`, `AlarmLog`, …) in [start, end) (whole
   * seconds, as the gateway reads its windows; each row has its time in ms), oldest
   * first, at most `limit`; `limitReached` says more existed (continue with
   * `afterSeq`).
   */
  history(machineID: string, type: string, start: number, end: number, limit: number, afterSeq?: number): Promise<{ rows: LinkHistoryRow[]; limitReached: boolean }>;
  /**
   * Calls `listener` whenever the gateway's machines or groups change (added,
   * changed, removed); returns a function that stops listening. Only a link
   * that hears its gateway's events has it (in-process); a remote gateway is
   * read again on an interval instead.
   */
  watchFleet?(listener: () => void): () => void;
}

/** Whether a link call failed because the gateway has seen a newer epoch of its fencing token. */
export const isSuperseded = (err: unknown): boolean => err instanceof GatewayLinkError && err.kind === 'superseded';

/** Subscribes to a gateway's machine and group changes; returns a function that stops listening. */
export type FleetChangeSource = (listener: () => void) => () => void;
