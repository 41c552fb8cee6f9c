/** docs/api.md's error table lists every entry of the error table with the same code, name and HTTP status. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../core/interfaces/errors.js';

describe('documented error table', () => {
  it('every entry of ERRORS appears in docs/api.md with its code, name and HTTP status, and nothing else does', () => {
    const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = text.slice(text.indexOf('## Error table'));
    const rows = [...section.matchAll(/^\| (\d+) \| ([A-Z_]+) \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    const expected = Object.entries(ERRORS).map(([name, e]) => `${e.code} ${name} ${e.http}`);
    expect([...rows].sort()).toEqual([...expected].sort());
  });
});
