/**
 * Where an assignment puts its file on a machine: the directory, and the
 * file name its template gives. Both are checked when the assignment is made
 * (422 naming the field), so a path-like name is refused at once and not
 * only at its first preview or transfer. The file name is checked by a dry
 * run of the transform itself (applyTransform, the code a preview and a
 * deployment run, with its isSafeFileName rule) on a minimal program, with
 * the program's name and the target machines' IDs, and the values a
 * transfer adds in the shape it gives them.
 */
import type { ProblemFieldError } from '../../core/rest/problem.js';
import { applyTransform, TransformError, type TemplateValues, type Transform } from './transform.js';

/** The values only a transfer knows, in the shape it gives them. */
const TRANSFER_VALUES = { programNumber: '', version: '1', versionId: 'ver_0123456789abcdef', sha256: '0'.repeat(64), sha8: '01234567', date: '2026-01-01' } as const;

/** The smallest program every transform rule applies to (an O-number line for programNumber). */
const MINIMAL_PROGRAM = Buffer.from('O0001\n');

export const DIR_ACCEPTED = "a controller directory without '..' segments, e.g. //CNC_MEM/USER/PATH1/ (empty: the machine's program directory)";
export const FILE_NAME_ACCEPTED = "a template that gives a plain file name: 1-128 printable ASCII characters, no '/' or '\\', no '..', no space at either end";

/** A directory that climbs out of itself with a `..` segment. */
function dirProblem(dir: string): ProblemFieldError | undefined {
  if (!dir.split(/[\\/]/).includes('..')) return undefined;
  return { field: 'body.dir', message: "has a '..' segment, which climbs out of the directory", accepted: DIR_ACCEPTED };
}

/** The file name the transform gives for one machine, refused as the transfer would refuse it. */
function fileNameProblem(transform: Transform, values: TemplateValues): ProblemFieldError | undefined {
  try {
    applyTransform(MINIMAL_PROGRAM, transform, values);
  } catch (err) {
    // Only the name is judged here; the other rules depend on the program's content and apply at the transfer.
    if (err instanceof TransformError && err.field === 'transform.fileName') return { field: 'body.transform.fileName', message: err.message, accepted: FILE_NAME_ACCEPTED };
  }
  return undefined;
}

/**
 * What is wrong with where an assignment of `program` to `machineIds` (a
 * machine, or a group's members) would put its file; empty when nothing is.
 */
export function placementProblems(dir: string, transform: Transform, program: string, machineIds: readonly string[]): ProblemFieldError[] {
  const problems: ProblemFieldError[] = [];
  const badDir = dirProblem(dir);
  if (badDir) problems.push(badDir);
  // Every machine gets the same name unless the template names {machine}; a group without members is checked with an ID's shape.
  const machines = transform.fileName.includes('{machine}') ? (machineIds.length ? machineIds : ['M1']) : [machineIds[0] ?? 'M1'];
  for (const machine of machines) {
    const badName = fileNameProblem(transform, { ...TRANSFER_VALUES, program, machine });
    if (badName) {
      problems.push(badName);
      break;
    }
  }
  return problems;
}
