/**
 * The templates a program's file name on a machine is written in (a
 * program's default, an assignment's transform): the variables they may use,
 * their schema, how one is filled, and the default a new program gets from
 * its name: its program number when the name starts with one (`O1234 Flange
 * OP10` → `O1234`), since a controller files a program by its number and not
 * by a name written for people. docs/programs-assignments.md.
 */
import { z } from 'zod';

/** Variables a template may use. */
export const TEMPLATE_VARIABLES = ['program', 'programNumber', 'version', 'versionId', 'sha256', 'sha8', 'date', 'machine'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Record<TemplateVariable, string>;

/** Longest file name template, and longest file name it may give. */
export const FILE_NAME_MAX = 128;

export const PRINTABLE = /^[\x20-\x7e]*$/;

const unknownVariables = (text: string): string[] =>
  [...text.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] as string).filter((v) => !(TEMPLATE_VARIABLES as readonly string[]).includes(v));

/** A template of at most `max` printable ASCII characters naming only known variables. */
export const templateSchema = (max: number) =>
  z
    .string()
    .max(max)
    .regex(PRINTABLE, 'printable ASCII only (controllers read ASCII)')
    .superRefine((text, check) => {
      const unknown = unknownVariables(text);
      if (unknown.length) check.addIssue({ code: 'custom', message: `unknown variable(s) ${unknown.map((v) => `{${v}}`).join(', ')}; accepted: ${TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(', ')}` });
    });

/** A file name template. */
export const fileNameTemplateSchema = templateSchema(FILE_NAME_MAX).min(1);

/** Fills a template; values are cut to printable ASCII ('?' for anything else). */
export function render(text: string, values: TemplateValues): string {
  return text.replace(/\{([a-zA-Z0-9]+)\}/g, (whole, name: string) =>
    name in values ? (values[name as TemplateVariable] ?? '').replace(/[^\x20-\x7e]/g, '?') : whole,
  );
}

/** The program number a name starts with (`O1234 Flange OP10`, `o12-shaft`), with at least four digits; undefined when it starts with none. */
export function programNumberOf(name: string): string | undefined {
  const m = /^\s*[Oo](\d{1,8})(?!\d)/.exec(name);
  if (!m || Number(m[1]) === 0) return undefined;
  return `O${(m[1] as string).padStart(4, '0')}`;
}

/** A new program's file name on its machines: its program number when its name starts with one, else its name (`{program}`). */
export function defaultFileName(programName: string): string {
  return programNumberOf(programName) ?? '{program}';
}
