/**
 * docs/configuration.md lists every key of the configuration, walked from
 * the schema assembled from every part of the build, each under its
 * top-level key's `### section`, and names in its owner column who declares
 * it (the runtime, a role or a plugin).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, type ConfigPartOwner } from '../../core/config/config-parts.js';
import { PACKAGE_ROOT } from '../../core/runtime/package-root.js';
import { CONFIG_PARTS } from '../../core/roles/index.js';

/** The parts of zod's internal definition this walk reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  element?: { _zod: { def: SchemaDef } };
}

/** Every key path of an object schema, looking through defaults, optionals and arrays (records are user-keyed: not entered). */
function keyPaths(def: SchemaDef, prefix: string[] = []): string[][] {
  if (['default', 'prefault', 'optional', 'nullable'].includes(def.type) && def.innerType) return keyPaths(def.innerType._zod.def, prefix);
  if (def.type === 'array' && def.element) return keyPaths(def.element._zod.def, prefix);
  if (def.type !== 'object' || !def.shape) return [];
  return Object.entries(def.shape).flatMap(([key, child]) => [[...prefix, key], ...keyPaths(child._zod.def, [...prefix, key])]);
}

/** Table rows under each `### section` heading of docs/configuration.md (`machines[]` is `machines`). */
function sectionRows(markdown: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^###\s+([A-Za-z]+)/.exec(line);
    if (heading) sections.set(heading[1]!, (current = []));
    else if (/^#{1,2}\s/.test(line)) current = undefined;
    else if (current && line.startsWith('|') && !line.startsWith('| field |') && !line.startsWith('|---')) current.push(line);
  }
  return sections;
}

const hasWord = (text: string, word: string) => new RegExp(`(^|[^A-Za-z0-9_])${word}($|[^A-Za-z0-9_])`).test(text);
const cells = (row: string) => row.split('|').slice(1, -1).map((c) => c.trim());

/** How the owner column names an owner: `runtime`, `gateway role`, `auth plugin`. */
const ownerText = (owner: ConfigPartOwner) => (owner.kind === 'runtime' ? 'runtime' : `${owner.name} ${owner.kind}`);

/** Who declares the key at `path`: the part declaring its section whole, or its field; undefined for a field still in the base sections of config/schema.ts. */
function ownerOf([top, field]: string[]): ConfigPartOwner | undefined {
  return CONFIG_PARTS.find(({ part }) => part.section === top && (part.schema !== undefined || (field !== undefined && field in (part.fields ?? {}))))?.owner;
}

/** The row documenting `path` in its section: its own row, or the row of its parent that names it (task classes under `tasks.<Class>`); the section's own row for a top-level key. */
function rowOf(rows: readonly string[], path: readonly string[]): string | undefined {
  const [top, ...rest] = path as [string, ...string[]];
  const key = rest[rest.length - 1] ?? top;
  const parent = rest.length ? (rest[rest.length - 2] ?? undefined) : undefined;
  return rows.find((row) => hasWord(cells(row)[0] ?? '', key)) ?? (parent !== undefined ? rows.find((row) => hasWord(cells(row)[0] ?? '', parent) && hasWord(row, key)) : undefined);
}

/** Keys whose row names another owner than the part declaring them (or no row at all); a section of fields is named by its fields' rows. */
function ownerMistakes(sections: ReadonlyMap<string, readonly string[]>, paths: readonly string[][]): string[] {
  const hasFields = (top: string) => paths.some((p) => p.length > 1 && p[0] === top);
  return paths.flatMap((path) => {
    if (path.length === 1 && hasFields(path[0] as string)) return [];
    const owner = ownerOf(path);
    const row = rowOf(sections.get(path[0] as string) ?? [], path);
    const documented = row ? cells(row)[3] : undefined;
    // The base sections still in config/schema.ts name the owner that will declare them; only the form is checked.
    const ok = owner ? documented === ownerText(owner) : /^(runtime|[a-z-]+ (role|plugin))$/.test(documented ?? '');
    return ok ? [] : [`${path.join('.')}: ${documented ?? '(no row)'}, declared by ${owner ? ownerText(owner) : 'the base'}`];
  });
}

const markdown = readFileSync(join(PACKAGE_ROOT, 'docs', 'configuration.md'), 'utf8');
const sections = sectionRows(markdown);
const paths = keyPaths((configSchema(CONFIG_PARTS) as unknown as { _zod: { def: SchemaDef } })._zod.def);

describe('docs/configuration.md', () => {
  it('documents every key of the assembled config schema in the section of its top-level key', () => {
    expect(paths.length).toBeGreaterThan(40);
    const missing = paths.filter(([top, ...rest]) => {
      const rows = sections.get(top as string);
      return !rows || (rest.length > 0 && !rowOf(rows, [top as string, ...rest]));
    });
    expect(missing.map((p) => p.join('.'))).toEqual([]);
  });

  it("names each key's owner: the runtime, the role or the plugin whose part declares it", () => {
    expect(ownerMistakes(sections, paths)).toEqual([]);
  });

  it('a row naming another owner than the part is found', () => {
    const swapped = sectionRows(markdown.replace(/^(\| `port` \| `8080` \|.*\| )gateway role \|$/m, '$1auth plugin |'));
    expect(ownerMistakes(swapped, paths)).toEqual(['communication.port: auth plugin, declared by gateway role']);
  });
});
