/**
 * One entry of a register map: where a value sits on the device (function,
 * address, type, word and byte order, scale, enumeration), or a constant for a
 * field the device does not hold (an axis name, an alarm level). Each field of
 * a family accepts a kind of value, and the item is checked against it.
 */
import { z } from 'zod';

export const MODBUS_FUNCTIONS = ['coils', 'discreteInputs', 'holding', 'input'] as const;
export type ModbusFunction = (typeof MODBUS_FUNCTIONS)[number];

export const VALUE_TYPES = ['bool', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'string'] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

export const ORDERS = ['big', 'little'] as const;
export type Order = (typeof ORDERS)[number];

/** Functions that address single bits rather than 16-bit registers. */
export const BIT_FUNCTIONS: ReadonlySet<ModbusFunction> = new Set(['coils', 'discreteInputs']);

const INTEGER_TYPES: ReadonlySet<ValueType> = new Set(['int16', 'uint16', 'int32', 'uint32']);
const NUMERIC_TYPES: ReadonlySet<ValueType> = new Set(['int16', 'uint16', 'int32', 'uint32', 'float32']);
const TYPE_RANGE: Partial<Record<ValueType, [number, number]>> = {
  int16: [-32_768, 32_767],
  uint16: [0, 65_535],
  int32: [-2_147_483_648, 2_147_483_647],
  uint32: [0, 4_294_967_295],
};
/** Registers one string item may span: a single read carries at most 125. */
export const MAX_STRING_REGISTERS = 125;

/** What a family field accepts. */
export type FieldKind =
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'text' }
  | { kind: 'choice'; values: readonly string[] };

/** A value read from the device. */
export interface RegisterItem {
  source: 'register';
  function: ModbusFunction;
  address: number;
  type: ValueType;
  /** Width in registers (register functions) or bits (bit functions). */
  width: number;
  wordOrder: Order;
  byteOrder: Order;
  scale: number;
  /** Code → value, for integer items. */
  enumeration?: ReadonlyMap<number, string>;
}

/** A value fixed by the configuration. */
export interface ConstantItem {
  source: 'constant';
  value: string | number | boolean;
}

export type MapItem = RegisterItem | ConstantItem;

/** The registers (or bits) a value type spans; strings span their `length`. */
export function widthOf(type: ValueType, length: number | undefined, fn: ModbusFunction): number {
  if (BIT_FUNCTIONS.has(fn)) return 1;
  if (type === 'string') return length ?? 0;
  return type === 'int32' || type === 'uint32' || type === 'float32' ? 2 : 1;
}

const rawItemSchema = z.strictObject({
  value: z.union([z.string(), z.number(), z.boolean()], { error: 'value must be a text, a number or true/false' }).optional(),
  function: z.enum(MODBUS_FUNCTIONS, { error: `function must be one of ${MODBUS_FUNCTIONS.join(', ')}` }).optional(),
  address: z
    .int({ error: 'address must be a whole number (0-based protocol address)' })
    .min(0, { error: 'address must be 0 or more' })
    .max(65_535, { error: 'address must be at most 65535' })
    .optional(),
  type: z.enum(VALUE_TYPES, { error: `type must be one of ${VALUE_TYPES.join(', ')}` }).optional(),
  length: z
    .int({ error: 'length must be a whole number of registers' })
    .min(1, { error: 'length must be at least 1 register' })
    .max(MAX_STRING_REGISTERS, { error: `length must be at most ${MAX_STRING_REGISTERS} registers` })
    .optional(),
  wordOrder: z.enum(ORDERS, { error: 'wordOrder must be big (high word first) or little (low word first)' }).optional(),
  byteOrder: z.enum(ORDERS, { error: 'byteOrder must be big (high byte first) or little (low byte first)' }).optional(),
  scale: z
    .number({ error: 'scale must be a number' })
    .refine((scale) => scale !== 0 && Number.isFinite(scale), { error: 'scale must be a finite number other than 0' })
    .optional(),
  enum: z
    .record(z.string().regex(/^-?\d+$/, { error: 'enum keys must be whole-number codes' }), z.string().min(1, { error: 'enum values must not be empty' }), {
      error: 'enum must map codes to values, e.g. {"0": "RESET"}',
    })
    .optional(),
});
type RawItem = z.output<typeof rawItemSchema>;

const REGISTER_KEYS = ['function', 'address', 'type', 'length', 'wordOrder', 'byteOrder', 'scale', 'enum'] as const;

function describeKind(kind: FieldKind): string {
  switch (kind.kind) {
    case 'number': return 'a number';
    case 'boolean': return 'true or false';
    case 'text': return 'a text';
    case 'choice': return `one of ${kind.values.join(', ')}`;
  }
}

function checkConstant(raw: RawItem, kind: FieldKind, ctx: z.RefinementCtx): void {
  for (const key of REGISTER_KEYS) {
    if (raw[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], input: raw[key], message: `a constant ({ value }) takes no ${key}; remove it or drop value` });
  }
  const { value } = raw;
  const fits =
    kind.kind === 'number' ? typeof value === 'number' :
    kind.kind === 'boolean' ? typeof value === 'boolean' :
    kind.kind === 'text' ? typeof value === 'string' :
    typeof value === 'string' && kind.values.includes(value);
  if (!fits) ctx.addIssue({ code: 'custom', path: ['value'], input: value, message: `value must be ${describeKind(kind)}` });
}

/** Which value types a field kind accepts from a register, and whether it needs an enumeration. */
function checkRegister(raw: RawItem, kind: FieldKind, ctx: z.RefinementCtx): void {
  const issue = (path: keyof RawItem, message: string) => ctx.addIssue({ code: 'custom', path: [path], input: raw[path], message });
  if (raw.function === undefined) issue('function', `function is required (${MODBUS_FUNCTIONS.join(', ')}), or give a constant { value }`);
  if (raw.address === undefined) issue('address', 'address is required: the 0-based protocol address');
  if (raw.type === undefined) issue('type', `type is required: one of ${VALUE_TYPES.join(', ')}`);
  if (raw.function === undefined || raw.type === undefined) return;
  const { type } = raw;
  if (BIT_FUNCTIONS.has(raw.function) && type !== 'bool') issue('type', `${raw.function} hold single bits: type must be bool`);
  if (type === 'string' && raw.length === undefined) issue('length', 'a string needs length: the number of registers it spans (2 characters each)');
  if (type !== 'string' && raw.length !== undefined) issue('length', 'length applies to type string only; remove it');
  if (raw.scale !== undefined && !NUMERIC_TYPES.has(type)) issue('scale', `scale applies to numeric types only (${[...NUMERIC_TYPES].join(', ')}); remove it`);
  if (raw.enum !== undefined) {
    if (!INTEGER_TYPES.has(type)) issue('enum', `an enumeration needs an integer type (${[...INTEGER_TYPES].join(', ')}), found type ${type}`);
    else if (raw.scale !== undefined) issue('scale', 'an enumerated item takes no scale: codes are compared as read');
    else {
      const [min, max] = TYPE_RANGE[type] ?? [0, 0];
      for (const [code, value] of Object.entries(raw.enum)) {
        if (Number(code) < min || Number(code) > max) issue('enum', `enum code ${code} is outside ${type} (${min}..${max})`);
        if (kind.kind === 'choice' && !kind.values.includes(value)) {
          ctx.addIssue({ code: 'custom', path: ['enum', code], input: value, message: `enum values must be one of ${kind.values.join(', ')}` });
        }
      }
    }
  }
  switch (kind.kind) {
    case 'number':
      if (!NUMERIC_TYPES.has(type)) issue('type', `a number field needs a numeric type (${[...NUMERIC_TYPES].join(', ')})`);
      else if (raw.enum !== undefined) issue('enum', 'a number field takes no enumeration');
      break;
    case 'boolean':
      if (type !== 'bool' && !INTEGER_TYPES.has(type)) issue('type', 'a true/false field needs type bool, or an integer type (0 is false)');
      else if (raw.enum !== undefined) issue('enum', 'a true/false field takes no enumeration');
      break;
    case 'text':
      if (type !== 'string' && !INTEGER_TYPES.has(type)) issue('type', 'a text field needs type string, or an integer type (the code, or its enum value)');
      break;
    case 'choice':
      // A non-integer type with an enum was reported with the enum above.
      if (raw.enum === undefined) issue('enum', `this field needs an enum mapping integer codes to ${kind.values.join(', ')}`);
      break;
  }
}

function toItem(raw: RawItem): MapItem {
  if (raw.value !== undefined) return { source: 'constant', value: raw.value };
  // checkRegister has guaranteed these by now.
  const fn = raw.function ?? 'holding';
  const type = raw.type ?? 'uint16';
  return {
    source: 'register',
    function: fn,
    address: raw.address ?? 0,
    type,
    width: widthOf(type, raw.length, fn),
    wordOrder: raw.wordOrder ?? 'big',
    byteOrder: raw.byteOrder ?? 'big',
    scale: raw.scale ?? 1,
    ...(raw.enum ? { enumeration: new Map(Object.entries(raw.enum).map(([code, value]) => [Number(code), value])) } : {}),
  };
}

/** The schema of one field's item: a register item, or `{ value }` for a constant. */
export function itemSchema(kind: FieldKind) {
  return rawItemSchema
    .superRefine((raw, ctx) => {
      if (raw.value !== undefined) checkConstant(raw, kind, ctx);
      else checkRegister(raw, kind, ctx);
    })
    .transform(toItem);
}
