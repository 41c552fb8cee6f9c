/**
 * Program transfers one at a time per machine file, and fenced: a caller
 * that holds a transfer under a lease (the program service, for each
 * deployment) sends its fencing token, the lease and the epoch it holds it
 * with. The gateway remembers the highest epoch it has seen per machine file
 * and lease, and refuses a transfer under an older one (2006,
 * PROGRAM_TRANSFER_SUPERSEDED), when it arrives and again when its turn at the
 * file comes: a holder that lost its lease while it stalled is stopped at the
 * machine, not only in its database. A transfer waits for the one under way
 * on the same file, so a new holder's read-back sees what an earlier upload
 * left, whole, instead of a file half written. A new holder announces its
 * epoch before it waits for anything (`/api/file/program/fences`), so the
 * old holder is refused from then on. A caller without a token is not
 * fenced. docs/api.md, "Fencing".
 */
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import type { FencingToken } from '../../core/gateway-link/types.js';

/** Machine files and leases whose highest epoch is kept; the least recently seen is forgotten first. */
export const FENCES_KEPT = 100_000;

/** The file a transfer is about. */
export interface ProgramFile {
  machineID: string;
  dir: string;
  name: string;
}

export class ProgramFences {
  /** The highest epoch seen per machine file and lease, least recently seen first. */
  private readonly seen = new Map<string, number>();
  /** The end of the last transfer queued per machine file. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly kept = FENCES_KEPT) {}

  /**
   * Notes `fence` for `file`: answers the highest epoch of its lease seen
   * for it, and whether `fence` is older (superseded, and not noted).
   */
  note(file: ProgramFile, fence: FencingToken): { superseded: boolean; highestEpoch: number } {
    const key = `${fileKey(file)}\n${fence.lease}`;
    const highest = this.seen.get(key);
    if (highest !== undefined && highest > fence.epoch) return { superseded: true, highestEpoch: highest };
    // Seen again: it moves to the end of the order in which entries are forgotten.
    this.seen.delete(key);
    this.seen.set(key, fence.epoch);
    while (this.seen.size > this.kept) this.seen.delete(this.seen.keys().next().value as string);
    return { superseded: false, highestEpoch: fence.epoch };
  }

  /** Notes `fence` for `file`; throws PROGRAM_TRANSFER_SUPERSEDED when a newer epoch of its lease has been seen for it. */
  check(file: ProgramFile, fence: FencingToken | undefined): void {
    if (!fence) return;
    const { superseded, highestEpoch } = this.note(file, fence);
    if (!superseded) return;
    throw new GatewayError(
      'PROGRAM_TRANSFER_SUPERSEDED',
      `fenceEpoch ${fence.epoch} of lease ${quote(fence.lease)} for ${quote(file.name)} in ${quote(file.dir)} on machine ${quote(file.machineID)}: epoch ${highestEpoch} has been seen since`,
    );
  }

  /**
   * Runs `transfer` once the transfers queued before it on the same machine
   * file have ended, checking `fence` on arrival and again when its turn
   * comes.
   */
  async run<T>(file: ProgramFile, fence: FencingToken | undefined, transfer: () => Promise<T>): Promise<T> {
    this.check(file, fence);
    const key = fileKey(file);
    const before = this.queues.get(key);
    const turn = (before ?? Promise.resolve()).then(() => {
      this.check(file, fence);
      return transfer();
    });
    const ended = turn.catch(() => undefined);
    this.queues.set(key, ended);
    void ended.then(() => {
      if (this.queues.get(key) === ended) this.queues.delete(key);
    });
    return turn;
  }
}

const fileKey = (file: ProgramFile): string => `${file.machineID}\n${file.dir}\n${file.name}`;
