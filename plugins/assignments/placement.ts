/**
 * Where an assignment puts its file on a machine: the directory, and the
 * file name its template gives. Both are checked when the assignment is made
 * or changed (422 naming the field), so a path-like name, or one a target
 * machine's control will not take, is refused at once and not only at its
 * first preview or transfer. The file name is checked by a dry run of the
 * transform itself (applyTransform, the code a preview and a deployment run,
 * with its isSafeFileName rule and the control family's rule) on a minimal
 * program, with the program's name, each target machine's ID and control,
 * and the values a transfer adds in the shape it gives them.
 */
import type { ProblemFieldError } from '../../core/rest/problem.js';
import type { ControlOf } from './file-name-rules.js';
import { applyTransform, TransformError, type TemplateValues, type Transform } from './transform.js';

/** A machine an assignment's file goes to, as placement judges it. */
export interface PlacedMachine extends ControlOf {
  machineId: string;
  programDir: string;
}

/** The values only a transfer knows, in the shape it gives them. */
const TRANSFER_VALUES = { programNumber: '', version: '1', versionId: 'ver_0123456789abcdef', sha256: '0'.repeat(64), sha8: '01234567', date: '2026-01-01' } as const;

/** The smallest program every transform rule applies to (an O-number line for programNumber). */
const MINIMAL_PROGRAM = Buffer.from('O0001\n');

export const DIR_ACCEPTED = "a controller directory without '..' segments, e.g. //CNC_MEM/USER/PATH1/ (empty: the machine's program directory)";
export const FILE_NAME_ACCEPTED = "a template that gives a plain file name: 1-128 printable ASCII characters, no '/' or '\\', no '..', no space at either end";

/** A directory that climbs out of itself with a `..` segment. */
function dirProblem(dir: string): ProblemFieldError | undefined {
  if (!dir.split(/[\\/]/).includes('..')) return undefined;
  return { field: 'body.dir', message: "the directory has a '..' segment, which climbs out of it", accepted: DIR_ACCEPTED };
}

/** The file name the transform gives for one machine, refused as the transfer would refuse it. */
function fileNameProblem(transform: Transform, values: TemplateValues, control: ControlOf): ProblemFieldError | undefined {
  try {
    applyTransform(MINIMAL_PROGRAM, transform, values, control);
  } catch (err) {
    // Only the name is judged here; the other rules depend on the program's content and apply at the transfer.
    if (err instanceof TransformError && err.field === 'transform.fileName') return { field: 'body.transform.fileName', message: err.message, accepted: err.accepted ?? FILE_NAME_ACCEPTED };
  }
  return undefined;
}

/** The words for a machine without a program directory, given no directory by its assignment either. */
export function noDirectoryMessage(machineIds: readonly string[]): string {
  const named = machineIds.slice(0, 10).join(', ') + (machineIds.length > 10 ? ` and ${machineIds.length - 10} more` : '');
  return `${machineIds.length === 1 ? 'machine' : 'machines'} ${named} ${machineIds.length === 1 ? 'has' : 'have'} no program directory and the assignment names none: `
    + 'give the assignment a directory, or set the machine\'s program directory (PATCH /api/v1/machines/{id}, or the Machines page)';
}

/** A missing directory: none given, and a target machine has no program directory of its own. */
function missingDirProblem(dir: string, machines: readonly PlacedMachine[]): ProblemFieldError | undefined {
  if (dir !== '') return undefined;
  const without = machines.filter((m) => m.programDir === '').map((m) => m.machineId).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (without.length === 0) return undefined;
  return { field: 'body.dir', message: noDirectoryMessage(without), accepted: DIR_ACCEPTED.replace(" (empty: the machine's program directory)", '') };
}

/**
 * What is wrong with where an assignment of `program` to `machines` (a
 * machine, or a group's members) would put its file; empty when nothing is.
 * An empty directory means each machine's own program directory, so it is
 * refused when a machine has none.
 */
export function placementProblems(dir: string, transform: Transform, program: string, machines: readonly PlacedMachine[]): ProblemFieldError[] {
  const problems: ProblemFieldError[] = [];
  const badDir = dirProblem(dir) ?? missingDirProblem(dir, machines);
  if (badDir) problems.push(badDir);
  // The name is judged for each control among the machines (and for each machine when the template names {machine});
  // a group without members is checked with an ID's shape and no control family.
  const judged = transform.fileName.includes('{machine}') ? machines : [...new Map(machines.map((m) => [`${m.system}\0${m.model}`, m])).values()];
  for (const machine of judged.length ? judged : [{ machineId: 'M1', programDir: '', system: '', model: '' }]) {
    const badName = fileNameProblem(transform, { ...TRANSFER_VALUES, program, machine: machine.machineId }, machine);
    if (badName) {
      problems.push(badName);
      break;
    }
  }
  return problems;
}

/** The problem's detail for placement problems: their messages as sentences. */
export function placementDetail(problems: readonly ProblemFieldError[]): string {
  return problems.map((e) => `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}${/[.!?]$/.test(e.message) ? '' : '.'}`).join(' ');
}
