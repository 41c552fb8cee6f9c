/**
 * The names each control family files a program under: one table, read by
 * the transform wherever it gives a file name for a machine (an assignment
 * made or changed, a preview, a deployment), so a name the machine's control
 * will not take is refused before anything is sent. The machine's `system`
 * (from its gateway's configuration) picks the family; a system not in the
 * table keeps the plain-file-name rule every name passes first
 * (isSafeFileName). docs/programs-assignments.md has the same table for
 * people, with why each rule is what it is.
 */

/** What a rule is judged against: the machine's control, as its gateway's configuration names it. */
export interface ControlOf {
  /** `FANUC`, `SIEMENS`, `HEIDENHAIN`, … (`system` in the gateway's machine configuration). */
  system: string;
  /** The control's model (`0i-MF Plus`, `31i-B5`), where a family's rule depends on it. */
  model: string;
}

export interface FileNameRule {
  /** The family as people name it. */
  family: string;
  /** Which `system` values belong to the family. */
  systems: RegExp;
  /** Whether the control takes `name`. */
  takes(name: string, model: string): boolean;
  /** What it takes, in words (for the refusal and the docs). */
  accepted(model: string): string;
}

/** FANUC models that take eight-digit program numbers (the 0i-F and the 30i/31i/32i/35i-B series, with that option on). */
const FANUC_LONG_NUMBERS = /(^|[^\d])(0i-?[A-Z]{0,2}F|3[0-5]i-?[A-Z]{0,2}B)/i;
const DEVICE_NAMES = /^(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])$/i;

const oNumber = (name: string, maxDigits: number): boolean => {
  const m = /^O(\d+)$/.exec(name);
  return m !== null && (m[1] as string).length >= 4 && (m[1] as string).length <= maxDigits && Number(m[1]) > 0;
};

export const FILE_NAME_RULES: readonly FileNameRule[] = [
  {
    family: 'FANUC',
    systems: /fanuc/i,
    takes: (name, model) => oNumber(name, FANUC_LONG_NUMBERS.test(model) ? 8 : 4),
    accepted: (model) => FANUC_LONG_NUMBERS.test(model)
      ? `O and its program number of 4 to 8 digits (O0001 to O99999999), as a ${model} files it`
      : 'O and its 4-digit program number (O0001 to O9999); 8 digits only on a 0i-F or 30i-B series control',
  },
  {
    family: 'Haas',
    systems: /haas/i,
    takes: (name) => oNumber(name, 5),
    accepted: () => 'O and its program number of 4 digits (O0001 to O9999), or 5 on the Next Generation Control (O00001 to O99999)',
  },
  {
    family: 'Siemens SINUMERIK',
    systems: /siemens|sinumerik/i,
    takes: (name) => {
      const m = /^(?:_N_([A-Za-z0-9_]{1,24})_(?:MPF|SPF)|([A-Za-z0-9_]{1,24})\.(?:MPF|SPF))$/i.exec(name);
      const base = m?.[1] ?? m?.[2];
      return base !== undefined && !DEVICE_NAMES.test(base);
    },
    accepted: () => 'a name of 1 to 24 letters, digits and _ as a main program NAME.MPF or _N_NAME_MPF (a subprogram .SPF / _SPF), not CON, PRN, AUX, NUL, COMn or LPTn',
  },
  {
    family: 'HEIDENHAIN',
    systems: /heidenhain/i,
    takes: (name) => /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,23}\.[HI]$/.test(name),
    accepted: () => 'a name of 1 to 24 letters, digits, _, - and . with .H (Klartext) or .I (ISO), e.g. PART20.H',
  },
  {
    family: 'Mazak',
    systems: /mazak|mazatrol/i,
    takes: (name) => /^[A-Za-z0-9_-]{1,32}$/.test(name),
    accepted: () => 'a work number of 1 to 32 letters, digits, _ and - (no extension, no blanks); digits only, at most 8, on a Mazatrol Matrix or 640',
  },
  {
    family: 'Okuma OSP',
    systems: /okuma/i,
    takes: (name) => /^[A-Za-z][A-Za-z0-9]{0,15}\.(MIN|SDF)$/i.test(name),
    accepted: () => 'a name of 1 to 16 letters and digits starting with a letter, with .MIN (a main program) or .SDF (a subprogram), e.g. PART1.MIN',
  },
];

/** The rule of a machine's control family; undefined for a system the table does not know. */
export function fileNameRuleOf(system: string): FileNameRule | undefined {
  return FILE_NAME_RULES.find((r) => r.systems.test(system));
}

/** Why `control` will not take `name`, as the rule it breaks (`a FANUC control takes only …`); undefined when it takes it or its family is not in the table. */
export function fileNameRefusal(control: ControlOf, name: string): string | undefined {
  const rule = fileNameRuleOf(control.system);
  if (!rule || rule.takes(name, control.model)) return undefined;
  return `a ${rule.family} control takes only ${rule.accepted(control.model)}`;
}
