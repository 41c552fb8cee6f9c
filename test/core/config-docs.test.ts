import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayConfigSchema } from '../../config/schema.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';

/** The parts of zod's internal definition this walk reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  element?: { _zod: { def: SchemaDef } };
}

/** Every key path of an object schema, looking through defaults, optionals and arrays (records are user-keyed: not entered). */
function keyPaths(def: SchemaDef, prefix: string[] = []): string[][] {
  if ((def.type === 'default' || def.type === 'optional' || def.type === 'nullable') && def.innerType) return keyPaths(def.innerType._zod.def, prefix);
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
    else if (current && line.startsWith('|')) current.push(line);
  }
  return sections;
}

const hasWord = (text: string, word: string) => new RegExp(`(^|[^A-Za-z0-9_])${word}($|[^A-Za-z0-9_])`).test(text);
const firstCell = (row: string) => row.split('|')[1] ?? '';

describe('docs/configuration.md', () => {
  it('documents every key of the config schema in the section of its top-level key', () => {
    const sections = sectionRows(readFileSync(join(PACKAGE_ROOT, 'docs', 'configuration.md'), 'utf8'));
    const paths = keyPaths((gatewayConfigSchema as unknown as { _zod: { def: SchemaDef } })._zod.def);
    expect(paths.length).toBeGreaterThan(40);
    const missing = paths.filter((path) => {
      const [top, ...rest] = path as [string, ...string[]];
      const rows = sections.get(top);
      if (!rows) return true;
      if (!rest.length) return false;
      const key = rest[rest.length - 1]!;
      const parent = rest[rest.length - 2];
      // A key is documented by its own row, or named in the row of its parent (e.g. task classes under `tasks.<Class>`).
      return !rows.some((row) => hasWord(firstCell(row), key) || (parent !== undefined && hasWord(firstCell(row), parent) && hasWord(row, key)));
    });
    expect(missing.map((p) => p.join('.'))).toEqual([]);
  });
});
