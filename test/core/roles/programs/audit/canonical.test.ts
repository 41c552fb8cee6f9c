import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { type AuditRow, canonicalText, canonicalTextByLibrary, type HashedFields, hashedFieldsOf, prepareEntry, recordHash } from '../../../../../core/roles/programs/audit/record.js';
import { QUOTED_FIELDS_SQL, canonicalFromQuoted } from '../../../../../core/roles/programs/audit/verify.js';
import { openChain } from './fixture.js';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

// Characters whose escaping RFC 8785 pins down: controls, quote, backslash, DEL, the JS line
// separators, a BOM, non-characters, combining marks, and astral characters (surrogate pairs).
const ODD = ['\u0000', '\u0001', '\b', '\t', '\n', '\f', '\r', '\u001f', '"', '\\', '/', '\u007f', '\u0080', '\u2028', '\u2029', '\ufeff', '\uffff', '\u0301', 'é', '€', '😀', '\u{10ffff}', '<', '>', '&', "'", ' '];
const NUMBERS = [0, -0, 1, -1, 0.1, 0.1 + 0.2, 1 / 3, 1e21, 1e-7, 5e-324, -1.5e300, 2 ** 53, 2 ** 53 + 2, 123456789.125, Number.MAX_VALUE, Number.MIN_VALUE, 9.999999999999999e22];

function oddString(rnd: () => number, max = 12): string {
  let s = '';
  const n = Math.floor(rnd() * max);
  for (let i = 0; i < n; i++) s += rnd() < 0.5 ? ODD[Math.floor(rnd() * ODD.length)] : String.fromCharCode(32 + Math.floor(rnd() * 95));
  return s;
}

function jsonValue(rnd: () => number, depth: number): unknown {
  const k = rnd();
  if (depth > 2 || k < 0.35) {
    const n = NUMBERS[Math.floor(rnd() * NUMBERS.length)]!;
    const scaled = n * (rnd() < 0.5 ? 1 : rnd() * 1000);
    return Number.isFinite(scaled) ? scaled : n;
  }
  if (k < 0.6) return oddString(rnd);
  if (k < 0.65) return rnd() < 0.5;
  if (k < 0.7) return null;
  if (k < 0.85) return Array.from({ length: Math.floor(rnd() * 4) }, () => jsonValue(rnd, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 5) }, () => [oddString(rnd, 6), jsonValue(rnd, depth + 1)]));
}

function maybe(rnd: () => number): string | null {
  return rnd() < 0.3 ? null : oddString(rnd) || 'x';
}

function randomRecord(rnd: () => number): HashedFields {
  const details = rnd() < 0.2 ? null : (jsonValue(rnd, 0) as object);
  const entry = prepareEntry({
    principalName: oddString(rnd) || 'p',
    onBehalfOf: maybe(rnd),
    authMethod: oddString(rnd) || 'a',
    category: oddString(rnd) || 'c',
    action: oddString(rnd) || 'x',
    entityType: maybe(rnd),
    entityId: maybe(rnd),
    machine: maybe(rnd),
    details: details !== null && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>) : { value: details },
  });
  const seqs = [1, 2 ** 53 - 1, Math.floor(rnd() * 2 ** 53), Math.floor(rnd() * 1e6)];
  return {
    ...entry,
    seq: seqs[Math.floor(rnd() * seqs.length)]!,
    time: new Date(Math.floor(rnd() * Date.UTC(9999, 11, 31))).toISOString(),
    prevHash: createHash('sha256').update(String(rnd())).digest('hex'),
  };
}

describe('audit record canonical text', () => {
  it('is byte-identical to the canonicalize library over 20,000 random records with odd strings and numbers', () => {
    const rnd = random(20261124);
    let differing: { record: HashedFields; fast: string; library: string | undefined } | undefined;
    for (let i = 0; i < 20_000 && !differing; i++) {
      const record = randomRecord(rnd);
      const fast = canonicalText(record);
      const library = canonicalize(record);
      const libraryHash = createHash('sha256').update(Buffer.from(library!, 'utf8')).digest('hex');
      if (fast !== library || canonicalTextByLibrary(record) !== library || recordHash(record) !== libraryHash) differing = { record, fast, library };
    }
    expect(differing).toBeUndefined();
  });

  it('refuses a lone surrogate as the library does', () => {
    const record = randomRecord(random(1));
    for (const lone of ['\uD800', 'a\uDC00', '\uDBFF\uDBFF']) {
      const bad = { ...record, entityId: lone };
      expect(() => canonicalize(bad)).toThrow('Lone surrogate');
      expect(() => canonicalText(bad)).toThrow('Lone surrogate');
    }
    // A well-formed pair is one character, not two lone halves.
    expect(canonicalText({ ...record, entityId: '\uD83D\uDE00' })).toBe(canonicalize({ ...record, entityId: '😀' }));
  });
});

describe('audit record canonical text built by SQLite for verify', () => {
  it('equals canonicalText for 2,000 stored random records with odd strings, so verify stays on its fast path', async () => {
    const { db, chain } = await openChain();
    try {
      const rnd = random(7);
      const entries = Array.from({ length: 2000 }, () => {
        const r = randomRecord(rnd);
        return { ...r, details: JSON.parse(r.details ?? '{}') as Record<string, unknown> };
      });
      await db.write((tx) => chain.appendMany(tx, entries), { transaction: true });
      const rows = await db.all<AuditRow & { quoted: string }>(`SELECT *, ${QUOTED_FIELDS_SQL} AS quoted FROM audit_log ORDER BY seq`);
      expect(rows).toHaveLength(2000);
      const differing = rows.find(
        (row) => canonicalFromQuoted(row.quoted.split('\x1f'), 0, String(row.seq), new Date(row.ts).toISOString()) !== canonicalText(hashedFieldsOf(row)),
      );
      expect(differing).toBeUndefined();
      expect(await chain.verify()).toEqual({ intact: true, checked: 2000, firstBrokenSeq: null });
    } finally {
      await db.close();
    }
  });
});
