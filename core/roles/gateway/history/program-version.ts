/**
 * The vault's identity of a program file the gateway wrote: when the program
 * service uploads a version of a vault program, it says which (the upload's
 * `vault` field, docs/api.md), and once the machine took the file the
 * gateway keeps it as a history row of this class; an upload that names no
 * version leaves one too, saying the file is no vault version any more.
 * The row is the record that survives a restart, and a history row so that
 * the MTConnect agent numbers what it changes like any observation
 * (docs/mtconnect.md).
 */

/** The history class of a program file's vault identity. */
export const PROGRAM_VERSION_CLASS = 'ProgramVersion';

/**
 * A ProgramVersion row's data: the file on the controller and the vault
 * version written to it; without `program`, `version` and `sha256`, a file
 * written that is no vault version (an upload that named none).
 */
export interface ProgramVersionData {
  /** The controller directory and file name the program was written to. */
  dir: string;
  name: string;
  /** The program's name in the vault. */
  program?: string;
  /** The version's number in the vault. */
  version?: number;
  /** The version's content SHA-256, as the vault stores it. */
  sha256?: string;
}
