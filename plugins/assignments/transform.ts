/**
 * A transform turns a released version into what one machine needs, by
 * declarative rules (docs/programs-assignments.md): the file name, the
 * program number of an `O` program, header and footer lines from templates,
 * literal word substitutions, and line endings. It works on the bytes: a
 * program line it does not touch is kept byte for byte, whatever its
 * encoding, and paper-tape characters (a DC2 before the leading `%`, a DC4
 * and NULs after the closing one) neither hide those lines nor are lost.
 */
import { z } from 'zod';
import { blockText, leadingBlanks } from '../../core/values/program-bytes.js';
import { FILE_NAME_MAX, fileNameTemplateSchema, PRINTABLE, render, templateSchema, type TemplateValues } from '../../core/roles/programs/file-name-template.js';
import { fileNameRefusal, fileNameRuleOf, type ControlOf } from './file-name-rules.js';

export { render, TEMPLATE_VARIABLES, type TemplateValues, type TemplateVariable } from '../../core/roles/programs/file-name-template.js';

const template = templateSchema;

export const transformSchema = z
  .object({
    fileName: fileNameTemplateSchema.default('{program}').describe('File name on the machine; a template. When an assignment is made without one: O{programNumber} with programNumber, else the program\'s fileName.'),
    programNumber: z.number().int().min(1).max(99_999_999).optional().describe('Renumbers the first O-number line (FANUC style): O<programNumber>, at least four digits.'),
    header: z.array(template(200)).max(20).default([]).describe('Lines inserted after the program-number line (or a leading %), each a template.'),
    footer: z.array(template(200)).max(20).default([]).describe('Lines inserted before the closing % (or at the end), each a template.'),
    substitutions: z
      .array(z.object({ from: z.string().min(1).max(64).regex(PRINTABLE, 'printable ASCII'), to: z.string().max(64).regex(PRINTABLE, 'printable ASCII') }).strict())
      .max(50)
      .default([])
      .describe('Literal replacements in every program line, in order (e.g. a dialect word).'),
    lineEnding: z.enum(['keep', 'lf', 'crlf']).default('keep'),
  })
  .strict();

export type Transform = z.output<typeof transformSchema>;
export type TransformInput = z.input<typeof transformSchema>;

export class TransformError extends Error {
  constructor(
    message: string,
    readonly field: string,
    /** What would be accepted, when the rule says it (a control family's file names). */
    readonly accepted?: string,
  ) {
    super(message);
    this.name = 'TransformError';
  }
}

interface Line {
  body: Buffer;
  eol: Buffer;
}

const CR = 0x0d;
const LF = 0x0a;

function splitLines(content: Buffer): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (let i = 0; i < content.length; i++) {
    const b = content[i];
    if (b !== CR && b !== LF) continue;
    const crlf = b === CR && content[i + 1] === LF;
    lines.push({ body: content.subarray(start, i), eol: content.subarray(i, i + (crlf ? 2 : 1)) });
    if (crlf) i++;
    start = i + 1;
  }
  if (start < content.length) lines.push({ body: content.subarray(start), eol: Buffer.alloc(0) });
  return lines;
}

/** What a controller reads in a line: its text without tape characters (NUL, DC1–DC4, DEL) and blanks. */
const blockOf = (line: Line): string => blockText(line.body.toString('latin1'));
const isPercent = (line: Line): boolean => blockOf(line) === '%';

/** A file name a controller directory can hold: no separators, no `..`, no control characters. */
export function isSafeFileName(name: string): boolean {
  return name.length > 0 && name.length <= FILE_NAME_MAX && !/[\\/]/.test(name) && !name.includes('..') && PRINTABLE.test(name) && name.trim() === name;
}

/** Throws TransformError when the control of machine `machineId` will not take `fileName` (file-name-rules.ts). */
export function checkFileNameFor(fileName: string, machineId: string, control: ControlOf): void {
  const refused = fileNameRefusal(control, fileName);
  if (!refused) return;
  const named = [control.system, control.model].filter(Boolean).join(' ');
  throw new TransformError(`the file name ${JSON.stringify(fileName.slice(0, 64))} will not do on machine ${machineId} (${named}): ${refused}`, 'transform.fileName', fileNameRuleOf(control.system)?.accepted(control.model));
}

/**
 * Applies `transform` to `content`; throws TransformError naming the rule
 * that cannot apply. With `control` (the machine's), the file name must also
 * be one its control family takes (file-name-rules.ts).
 */
export function applyTransform(content: Buffer, transform: Transform, given: TemplateValues, control?: ControlOf): { content: Buffer; fileName: string } {
  // {programNumber} is the number the O line gets, with its leading zeros.
  const number = transform.programNumber !== undefined ? String(transform.programNumber).padStart(4, '0') : undefined;
  const values: TemplateValues = number !== undefined ? { ...given, programNumber: number } : given;
  const fileName = render(transform.fileName, values);
  if (!isSafeFileName(fileName)) throw new TransformError(`the file name template gives ${JSON.stringify(fileName.slice(0, 64))}, which is not a plain file name`, 'transform.fileName');
  if (control) checkFileNameFor(fileName, given.machine, control);
  // Nothing to change in the content: the machine gets the version's bytes as they are.
  if (transform.programNumber === undefined && !transform.header.length && !transform.footer.length && !transform.substitutions.length && transform.lineEnding === 'keep') {
    return { content, fileName };
  }
  const lines = splitLines(content);
  const firstEol = lines.find((l) => l.eol.length > 0)?.eol ?? Buffer.from('\n');
  const eol = transform.lineEnding === 'lf' ? Buffer.from('\n') : transform.lineEnding === 'crlf' ? Buffer.from('\r\n') : firstEol;

  for (const line of lines) {
    if (transform.substitutions.length === 0) break;
    let text = line.body.toString('latin1');
    for (const { from, to } of transform.substitutions) text = text.split(from).join(to);
    line.body = Buffer.from(text, 'latin1');
  }

  // The program-number line: the first line that is not blank or '%' (tape characters aside, as a reader skips them).
  let numberLine = -1;
  for (let i = 0; i < lines.length; i++) {
    const text = blockOf(lines[i] as Line);
    if (text === '' || text === '%') continue;
    if (/^O\d+/i.test(text)) numberLine = i;
    break;
  }
  if (transform.programNumber !== undefined) {
    if (numberLine < 0) throw new TransformError('programNumber is set, but the program has no O-number line at its start', 'transform.programNumber');
    const line = lines[numberLine] as Line;
    const text = line.body.toString('latin1');
    const lead = leadingBlanks(text);
    line.body = Buffer.from(text.slice(0, lead) + text.slice(lead).replace(/^[Oo]\d+/, `O${number}`), 'latin1');
  }

  const asLines = (templates: readonly string[]): Line[] => templates.map((t) => ({ body: Buffer.from(render(t, values), 'latin1'), eol }));
  if (transform.header.length) {
    const leadingPercent = lines.length > 0 && isPercent(lines[0] as Line) ? 0 : -1;
    const after = numberLine >= 0 ? numberLine : leadingPercent;
    lines.splice(after + 1, 0, ...asLines(transform.header));
  }
  if (transform.footer.length) {
    let closing = -1;
    for (let i = lines.length - 1; i >= 0; i--) {
      const text = blockOf(lines[i] as Line);
      if (text === '') continue;
      if (text === '%' && i > 0) closing = i;
      break;
    }
    const at = closing >= 0 ? closing : lines.length;
    const before = lines[at - 1];
    if (before && before.eol.length === 0) before.eol = eol;
    lines.splice(at, 0, ...asLines(transform.footer));
  }
  const parts: Buffer[] = [];
  for (const line of lines) {
    parts.push(line.body);
    if (line.eol.length) parts.push(transform.lineEnding === 'keep' ? line.eol : eol);
  }
  return { content: Buffer.concat(parts), fileName };
}
