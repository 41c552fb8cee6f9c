/**
 * The docs name files of the project by their paths (`core/mcp/tools.ts`) and
 * link to each other; a file that moved leaves a path that leads nowhere.
 * Every such path in README.md and docs/ must exist.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
/** The project's own top-level folders: a code span starting with one of them is a path in the project. */
const PROJECT_PATH = /^(?:core|plugins|drivers|test|config|docs|\.ci)\//;

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** The project paths a page names in code spans, each word of a span by itself; placeholders (`<scheme>`, `*`, `{id}`) left out. */
function namedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
  return spans
    .flatMap((span) => span.split(/\s+/))
    .map((word) => word.replace(/[),;:.]+$/, '').replace(/:\d+$/, ''))
    .filter((word) => PROJECT_PATH.test(word) && !/[<>*{}…]/.test(word));
}

/** The targets of relative Markdown links, without their #fragments. */
function linkTargets(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t));
}

describe('paths in the docs', () => {
  it('every file path and relative link in README.md and docs/ leads to a file of the project', () => {
    const pages = ['README.md', ...markdownFiles('docs')];
    const missing: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const path of namedPaths(text)) {
        checked++;
        if (!existsSync(join(ROOT, path))) missing.push(`${page}: ${path}`);
      }
      for (const target of linkTargets(text)) {
        checked++;
        if (!existsSync(resolve(ROOT, dirname(page), target))) missing.push(`${page}: link ${target}`);
      }
    }
    expect(missing).toEqual([]);
    // The pages do name files: the check is not vacuous.
    expect(checked).toBeGreaterThan(100);
  });
});
