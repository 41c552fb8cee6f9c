/** docs/architecture.md's runtime diagram names every plugin each role boots, so it cannot fall behind the roles' composition roots (core/roles/<role>/compose.ts). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLES } from '../../core/roles/index.js';

describe('architecture doc', () => {
  it('the runtime diagram lists every plugin of the roles\' plugin lists and no other', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
    const diagram = doc.slice(doc.indexOf('## Runtime at a glance'));
    const block = diagram.slice(diagram.indexOf('```') + 3, diagram.indexOf('```', diagram.indexOf('```') + 3));
    const drawn = [...block.matchAll(/[├└]─ ([a-z-]+) {2,}/g)].map((m) => m[1]);
    expect([...drawn].sort()).toEqual(ROLES.flatMap((r) => r.plugins).map((p) => p.name).sort());
  });
});
