import { parseCsv } from '../../../../fixtures/csv.js';
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditChain, AuditFilter, AuditRecord } from '../../../../../core/roles/programs/audit/chain.js';
import { CSV_COLUMNS } from '../../../../../core/roles/programs/audit/csv.js';
import { GatewayError } from '../../../../../core/interfaces/errors.js';
import { chainsClosedAfterEach, entry, fill } from './fixture.js';

const env = chainsClosedAfterEach();

/** Every page of a listing, following nextCursor. */
async function allPages(chain: AuditChain, filter: AuditFilter, limit: number, order?: 'newest' | 'oldest'): Promise<{ pages: number; records: AuditRecord[] }> {
  const records: AuditRecord[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await chain.query(filter, { limit, ...(cursor ? { cursor } : {}), ...(order ? { order } : {}) });
    pages++;
    records.push(...page.records);
    if (!page.nextCursor) return { pages, records };
    cursor = page.nextCursor;
  }
}

async function invalidField(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).errorName).toBe('INVALID_PARAMETER');
  return (err as GatewayError).message;
}

describe('AuditChain query', () => {
  it('PV-40 filters by principalName, machine, entityType, entityId and category, alone and together', async () => {
    const e = await env();
    await fill(e, 24);
    const all = (await allPages(e.chain, {}, 1000)).records;
    expect(all).toHaveLength(24);
    const cases: [AuditFilter, (r: AuditRecord) => boolean][] = [
      [{ principalName: 'alice' }, (r) => r.principalName === 'alice'],
      [{ machine: 'M2' }, (r) => r.machine === 'M2'],
      [{ entityType: 'version' }, (r) => r.entityType === 'version'],
      [{ entityId: '107' }, (r) => r.entityId === '107'],
      [{ category: 'deployment' }, (r) => r.category === 'deployment'],
      [{ principalName: 'mes-token', category: 'deployment', machine: 'M0' }, (r) => r.principalName === 'mes-token' && r.category === 'deployment' && r.machine === 'M0'],
      [{ entityType: 'deployment', entityId: '107' }, () => false],
    ];
    for (const [filter, match] of cases) {
      const got = (await e.chain.query(filter, { limit: 1000 })).records;
      expect(got.map((r) => r.seq), JSON.stringify(filter)).toEqual(all.filter(match).map((r) => r.seq));
      expect(got.length > 0 || filter.entityId === '107').toBe(true);
    }
  });

  it('PV-40 pages by opaque cursor newest first by default, oldest first on request, with no record twice or missed', async () => {
    const e = await env();
    await fill(e, 23);
    const newest = await allPages(e.chain, {}, 5);
    expect(newest.pages).toBe(5);
    expect(newest.records.map((r) => r.seq)).toEqual(Array.from({ length: 23 }, (_, i) => 23 - i));
    const oldest = await allPages(e.chain, { category: 'vault' }, 4, 'oldest');
    expect(oldest.records.map((r) => r.seq)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1).filter((s) => s % 2 === 0));
    const first = await e.chain.query({});
    expect(first.records).toHaveLength(23);
    expect(first.nextCursor).toBeNull();
  });

  it('refuses a bad limit, order or cursor with INVALID_PARAMETER naming the field', async () => {
    const e = await env();
    await fill(e, 3);
    expect(await invalidField(e.chain.query({}, { limit: 0 }))).toContain('limit');
    expect(await invalidField(e.chain.query({}, { limit: 1001 }))).toContain('1 to 1000');
    expect(await invalidField(e.chain.query({}, { order: 'sideways' as never }))).toContain('newest, oldest');
    expect(await invalidField(e.chain.query({}, { cursor: 'not-ours' }))).toContain('cursor');
    const { nextCursor } = await e.chain.query({}, { limit: 1 });
    expect(await invalidField(e.chain.query({}, { cursor: nextCursor!, order: 'oldest' }))).toContain('order');
    expect(await invalidField(e.chain.query({ machine: '' }))).toContain('machine');
  });

  it('PV-41 reads from and to as calendar dates in the service zone across both DST changes (23- and 25-hour days)', async () => {
    const e = await env({ timeZone: 'Europe/Berlin', start: 0 });
    // Berlin: 2026-03-29 has 23 hours (CET→CEST), 2026-10-25 has 25 hours (CEST→CET).
    const times = [
      '2026-03-28T22:59:59.999Z', // 28 Mar 23:59:59.999 local
      '2026-03-28T23:00:00.000Z', // 29 Mar 00:00 local (CET)
      '2026-03-29T21:59:59.999Z', // 29 Mar 23:59:59.999 local (CEST)
      '2026-03-29T22:30:00.000Z', // 30 Mar 00:30 local, before a naive start + 24 h
      '2026-10-24T21:59:59.999Z', // 24 Oct 23:59:59.999 local (CEST)
      '2026-10-24T22:00:00.000Z', // 25 Oct 00:00 local
      '2026-10-25T22:30:00.000Z', // 25 Oct 23:30 local (CET), after a naive start + 24 h
      '2026-10-25T23:00:00.000Z', // 26 Oct 00:00 local
    ];
    for (const [i, t] of times.entries()) {
      e.clock.now = Date.parse(t);
      await e.db.write((tx) => e.chain.append(tx, entry(i)), { transaction: true });
    }
    const timesOf = async (filter: AuditFilter) => (await e.chain.query(filter, { order: 'oldest' })).records.map((r) => r.time);
    expect(await timesOf({ from: '2026-03-29', to: '2026-03-29' })).toEqual([times[1], times[2]]);
    expect(await timesOf({ from: '2026-10-25', to: '2026-10-25' })).toEqual([times[5], times[6]]);
    expect(await timesOf({ from: '2026-10-25' })).toEqual(times.slice(5));
    expect(await timesOf({ to: '2026-03-28' })).toEqual([times[0]]);
    // An instant is taken as given: from inclusive, to exclusive.
    expect(await timesOf({ from: '2026-03-29T22:30:00Z', to: '2026-10-24T22:00:00.000Z' })).toEqual([times[3], times[4]]);
    expect(await timesOf({ from: '2026-10-25T00:00:00+02:00', to: '2026-10-26T00:00:00+01:00' })).toEqual([times[5], times[6]]);
    expect(await timesOf({ from: '2027-01-01' })).toEqual([]);
  });

  it('PV-41 refuses a from or to that is neither a calendar date nor an instant with an offset, naming the field and the accepted forms', async () => {
    const e = await env();
    expect(await invalidField(e.chain.query({ from: '24.11.2026' }))).toMatch(/^Invalid parameter\. from: .*calendar date YYYY-MM-DD/);
    expect(await invalidField(e.chain.query({ from: '2026-02-30' }))).toContain('no such date');
    // A `to` date is read up to the end of its day: an impossible one must not roll over into the next month or year.
    expect(await invalidField(e.chain.query({ to: '2026-13-01' }))).toMatch(/to: .*no such date/);
    expect(await invalidField(e.chain.query({ to: '2026-04-31' }))).toMatch(/to: .*no such date/);
    expect(await invalidField(e.chain.query({ to: '2026-11-24T08:00' }))).toContain('to:');
    expect(await invalidField(e.chain.query({ from: '2026-11-25', to: '2026-11-24T00:00:00Z' }))).toContain('not later than from');
  });
});

describe('AuditChain exportCsv', () => {
  const odd = [
    'plain',
    'comma, inside',
    'quote " inside',
    '"starts with a quote',
    'line\nbreak',
    'crlf\r\nbreak',
    '=SUM(A1:A9)',
    '+1',
    '-2',
    '@cmd',
    '\tleading tab',
    '\rleading cr',
    "'already quoted",
    'emoji 😀 and ü',
  ];

  it('PV-40 exports the filtered selection as RFC 4180 CSV that parses back to the records, formulas guarded', async () => {
    const e = await env();
    for (const [i, text] of odd.entries()) {
      e.clock.now += 1;
      await e.db.write(
        (tx) => e.chain.append(tx, entry(i, { principalName: text, entityId: text, machine: i % 2 ? text : null, details: { text, n: -0.5 } })),
        { transaction: true },
      );
    }
    await fill(e, 3, 100);
    const filter = { category: 'deployment' };
    const chunks: string[] = [];
    for await (const chunk of e.chain.exportCsv(filter)) chunks.push(chunk);
    const text = chunks.join('');
    // Outside quoted fields every line ends in CRLF; CR and LF occur bare only inside quotes.
    const unquoted = text.replace(/"(?:[^"]|"")*"/g, '');
    expect(unquoted).not.toMatch(/[^\r]\n|\r(?!\n)/);
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...CSV_COLUMNS]);
    const records = (await e.chain.query(filter, { order: 'oldest', limit: 1000 })).records;
    expect(rows).toHaveLength(records.length);
    expect(records.length).toBeGreaterThan(5);
    const unguard = (cell: string) => (cell.startsWith("'") ? cell.slice(1) : cell);
    for (const [k, record] of records.entries()) {
      const expected = CSV_COLUMNS.map((c) => {
        const v = record[c];
        return v === null ? '' : c === 'details' ? canonicalize(v)! : String(v);
      });
      expect(rows[k]!.map(unguard)).toEqual(expected);
      // No cell a spreadsheet would evaluate.
      for (const cell of rows[k]!) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
      // The CSV carries everything an outside verifier needs to recompute the hash.
      const fields = Object.fromEntries(CSV_COLUMNS.filter((c) => c !== 'hash').map((c, j) => [c, rows[k]![j] === '' ? null : unguard(rows[k]![j]!)]));
      const hashed = canonicalize({ ...fields, seq: Number(fields.seq) })!;
      expect(createHash('sha256').update(hashed).digest('hex')).toBe(unguard(rows[k]![12]!));
    }
    expect(rows.some((r) => r[2] === "'=SUM(A1:A9)")).toBe(true);
    expect(rows.some((r) => r[2] === "''already quoted")).toBe(true);
  });

  it('PV-40 streams a large export in pages of 1000 records, newest first on request', async () => {
    const e = await env();
    await e.db.write((tx) => e.chain.appendMany(tx, Array.from({ length: 2500 }, (_, i) => entry(i))), { transaction: true });
    const chunks: string[] = [];
    for await (const chunk of e.chain.exportCsv({}, { order: 'newest', guardFormulas: false })) chunks.push(chunk);
    expect(chunks).toHaveLength(4);
    const rows = parseCsv(chunks.join('')).slice(1);
    expect(rows.map((r) => Number(r[0]))).toEqual(Array.from({ length: 2500 }, (_, i) => 2500 - i));
  });

  it('PV-40 fails an export with a bad filter before any chunk', async () => {
    const e = await env();
    const it = e.chain.exportCsv({ to: 'tomorrow' });
    expect(await invalidField(it.next())).toContain('to:');
  });
});
