/**
 * Ids of the program service's records: a prefix naming the kind and 16
 * lowercase hex digits (`lib_0123456789abcdef`), made by `newId` and checked
 * on input by `idOf`.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** A new id of the kind `prefix`: the prefix, `_` and 16 random hex digits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/**
 * An input id of the kind `prefix`. `minDigits` below 16 also accepts the
 * shorter ids an earlier version made (the accounts' users and tokens).
 */
export function idOf(prefix: string, options: { minDigits?: number } = {}): z.ZodString {
  const digits = options.minDigits === undefined || options.minDigits === 16 ? '{16}' : `{${options.minDigits},16}`;
  return z.string().regex(new RegExp(`^${prefix}_[0-9a-f]${digits}$`), `an id such as ${prefix}_0123456789abcdef`);
}

/** The path parameters of an operation on one record: `{id}`. */
export function idParams(prefix: string): z.ZodObject<{ id: z.ZodString }> {
  return z.object({ id: idOf(prefix) });
}
