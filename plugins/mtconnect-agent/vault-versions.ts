/**
 * The vault versions of one machine's program files, from its ProgramVersion
 * history rows (core/roles/gateway/history/program-version.ts): the last one
 * the gateway wrote to each file name (none when its last upload named none). The running program (the status's
 * `program`) is a file name; when the gateway wrote that file from the vault,
 * the Path's vault items show which version it is (docs/mtconnect.md). A
 * file name is matched whatever directory it was written to: the status
 * names the program, not its directory.
 *
 * At most MAX_VAULT_FILES file names are kept per machine, the most recently
 * written; a replay rebuilt at any position reads the same ones
 * (gateway-reader.ts), so the live agent and a read of the past agree.
 */

/** File names whose vault version is kept per machine. */
export const MAX_VAULT_FILES = 256;

/** A file's vault version: the program's name in the vault, the version's number and content SHA-256. */
export interface VaultVersion {
  program: string;
  version: number;
  sha256: string;
}

export class VaultVersions {
  /**
   * By file name, least recently written first; undefined for a file last
   * written as no vault version (kept all the same, so that the names kept
   * are the MAX_VAULT_FILES written last, as a rebuilt replay reads them).
   */
  private readonly files = new Map<string, VaultVersion | undefined>();

  /** A ProgramVersion row's data: the file's version now, or none when the row names none; a row without a file name is ignored. */
  recorded(data: Record<string, unknown>): void {
    const { name, program, version, sha256 } = data;
    if (typeof name !== 'string') return;
    const known = typeof program === 'string' && typeof sha256 === 'string' && typeof version === 'number';
    // Written again: it moves to the end of the order in which file names are forgotten.
    this.files.delete(name);
    this.files.set(name, known ? { program, version, sha256 } : undefined);
    if (this.files.size > MAX_VAULT_FILES) this.files.delete(this.files.keys().next().value as string);
  }

  /** The vault version of the running program `program` (the status's), when the gateway last wrote that file from the vault. */
  running(program: unknown): VaultVersion | undefined {
    return typeof program === 'string' && program !== '' ? this.files.get(program) : undefined;
  }
}
