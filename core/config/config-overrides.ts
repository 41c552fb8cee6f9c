/**
 * What happens to the file's object before the schema reads it
 * (core/config/config.ts `parseConfig`): the old spellings the parts still read
 * are moved to their new paths, then the environment variables the parts
 * declare override their fields. After the schema, a mistake in a value
 * the file gave under an old spelling is named by that spelling.
 */
import type { z } from 'zod';
import type { ConfigAlias, ConfigOverride } from './config-parts.js';
import { describeFound } from '../interfaces/schema-errors.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The object holding the last key of `path`, created on the way when `create`; undefined where something that is not an object is in the way (the schema reports it). */
function parentOf(root: Json, path: readonly string[], create: boolean): Json | undefined {
  let at: Json = root;
  for (const key of path.slice(0, -1)) {
    if (at[key] === undefined && create) at[key] = {};
    const next = at[key];
    if (!isObject(next)) return undefined;
    at = next;
  }
  return at;
}

/** The value at a dotted path, or undefined. */
export function valueAtPath(root: unknown, path: string): unknown {
  let at = root;
  for (const key of path.split('.')) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** Sets the value at a dotted path, creating the objects on the way; nothing where a value that is not an object is in the way. */
export function setAtPath(root: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  const parent = parentOf(root, keys, true);
  if (parent) parent[keys[keys.length - 1] as string] = value;
}

/** Removes the objects along `path` that moving a value out of them left empty: they were written only to hold the old spelling. */
function removeEmptied(root: Json, path: readonly string[]): void {
  for (let depth = path.length; depth > 0; depth--) {
    const parent = parentOf(root, path.slice(0, depth), false);
    const key = path[depth - 1] as string;
    const value = parent?.[key];
    if (!parent || !isObject(value) || Object.keys(value).length > 0) return;
    delete parent[key];
  }
}

/** What moving the old spellings did: the aliases the file used, and the mistakes found (both spellings at once). */
export interface MovedSpellings {
  used: ConfigAlias[];
  problems: string[];
}

/**
 * Moves every old spelling `raw` uses to its new path, removing the old
 * key. A file that gives both spellings of one value is refused: which one
 * it meant cannot be known.
 */
export function moveOldSpellings(raw: Json, aliases: readonly ConfigAlias[]): MovedSpellings {
  const moved: MovedSpellings = { used: [], problems: [] };
  for (const alias of aliases) {
    const keys = alias.from.split('.');
    const parent = parentOf(raw, keys, false);
    const key = keys[keys.length - 1] as string;
    if (!parent || !Object.hasOwn(parent, key)) continue;
    if (valueAtPath(raw, alias.to) !== undefined) {
      moved.problems.push(`${alias.from}: ${alias.to} is given too; write only ${alias.to} (${alias.from} is its old spelling)`);
      continue;
    }
    setAtPath(raw, alias.to, parent[key]);
    delete parent[key];
    removeEmptied(raw, keys.slice(0, -1));
    moved.used.push(alias);
  }
  return moved;
}

/** The line a file that uses an old spelling gets, at start and from commands. */
export function oldSpellingNotice(file: string, alias: ConfigAlias): string {
  return `config ${file}: ${alias.from} is the old spelling of ${alias.to}, read as it; write ${alias.to} instead (the old spelling will stop being read)`;
}

/** A port from the environment; a problem when it is not an integer 0-65535. */
function readPort(variable: string, text: string): number | string {
  const n = Number(text);
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : `${variable} (environment): found ${describeFound(text)}; expected an integer 0-65535`;
}

/** A boolean from the environment (`true`/`1`, `false`/`0`); a problem otherwise. */
function readBoolean(variable: string, text: string): boolean | string {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return `${variable} (environment): found ${describeFound(text)}; expected true, false, 1 or 0`;
}

/**
 * Applies every override whose variable is set and not empty to `raw`;
 * returns the overridden paths, or the first problem (a variable whose
 * text is not of its type).
 */
export function applyEnvironment(raw: Json, env: NodeJS.ProcessEnv, overrides: readonly ConfigOverride[]): { paths: string[] } | { problem: string } {
  const paths: string[] = [];
  for (const { variable, path, type } of overrides) {
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const value = type === 'port' ? readPort(variable, text) : type === 'boolean' ? readBoolean(variable, text) : text;
    if (type !== 'text' && typeof value === 'string') return { problem: value };
    setAtPath(raw, path, value);
    paths.push(path);
  }
  return { paths };
}

/**
 * The issues with the paths the file wrote: an issue inside a value moved
 * from an old spelling is named by the old spelling (unless the
 * environment overrode that value).
 */
export function issuesAsWritten(issues: readonly z.core.$ZodIssue[], used: readonly ConfigAlias[], overridden: readonly string[]): z.core.$ZodIssue[] {
  const renames = used.filter((alias) => !overridden.includes(alias.to)).map((alias) => ({ from: alias.from.split('.'), to: alias.to.split('.') }));
  if (!renames.length) return [...issues];
  return issues.map((issue) => {
    const rename = renames.find(({ to }) => to.every((key, i) => String(issue.path[i]) === key));
    return rename ? { ...issue, path: [...rename.from, ...issue.path.slice(rename.to.length)] } : issue;
  });
}
