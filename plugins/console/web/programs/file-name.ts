/**
 * The file name a template gives, as the service renders it
 * (core/roles/programs/file-name-template.ts), for the forms that show the
 * final name while it is typed: a program's default from its number, and a
 * template filled with the values a transfer would give. The service checks
 * the name against the machine's control when the form is sent.
 */

/** The program number a name starts with (`O1234 Flange OP10` → `O1234`), as the service reads it. */
export function numberOf(name: string): string | undefined {
  const m = /^\s*[Oo](\d{1,8})(?!\d)/.exec(name);
  return m && Number(m[1]) !== 0 ? `O${(m[1] as string).padStart(4, '0')}` : undefined;
}

/** A new program's default file name: its number, else its name. */
export const defaultFileName = (name: string) => numberOf(name) ?? '{program}';

/** The template filled in; values are cut to printable ASCII, as the service does. */
export function renderName(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-zA-Z0-9]+)\}/g, (whole, key: string) => (key in values ? (values[key] ?? '').replace(/[^\x20-\x7e]/g, '?') : whole));
}

/** The values of a transfer of `version` to `machineId` today, for the preview of a name. */
export function transferValues(program: { name: string }, version: { id: string; number: number; sha256: string }, machineId: string, programNumber?: number): Record<string, string> {
  return {
    program: program.name, programNumber: programNumber !== undefined ? String(programNumber).padStart(4, '0') : '', version: String(version.number), versionId: version.id,
    sha256: version.sha256, sha8: version.sha256.slice(0, 8), date: new Date().toISOString().slice(0, 10), machine: machineId,
  };
}
