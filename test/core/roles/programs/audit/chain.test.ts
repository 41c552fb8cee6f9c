import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { AuditChain, GENESIS_HASH } from '../../../../../core/roles/programs/audit/chain.js';
import type { Database } from '../../../../../core/store/database.js';
import { GatewayError } from '../../../../../core/interfaces/errors.js';
import { chainsClosedAfterEach, entry, fill, tamper, T0 } from './fixture.js';

const env = chainsClosedAfterEach();

async function seqs(db: Database): Promise<number[]> {
  return (await db.all<{ seq: number }>('SELECT seq FROM audit_log ORDER BY seq')).map((r) => r.seq);
}

describe('AuditChain append', () => {
  it('chains each record to the previous hash, from the genesis hash, hashing the RFC 8785 record', async () => {
    const e = await env();
    const first = await e.db.write((tx) => e.chain.append(tx, entry(0)), { transaction: true });
    e.clock.now += 5;
    const second = await e.db.write((tx) => e.chain.append(tx, entry(1)), { transaction: true });
    expect(first).toMatchObject({ seq: 1, prevHash: GENESIS_HASH, time: new Date(T0).toISOString(), principalName: 'alice', details: { i: 0, note: 'change 0' } });
    expect(second).toMatchObject({ seq: 2, prevHash: first.hash, time: new Date(T0 + 5).toISOString() });
    // An outside verifier needs only the library and sha256: details is hashed as its canonical text.
    const { hash, ...fields } = second;
    const expected = createHash('sha256').update(canonicalize({ ...fields, details: canonicalize(fields.details) }) as string).digest('hex');
    expect(hash).toBe(expected);
    expect(await e.chain.committedHead()).toEqual({ seq: 2, hash: second.hash });
  });

  it('leaves no record and the head unchanged when the transaction rolls back, and continues from the committed head', async () => {
    const e = await env();
    await fill(e, 3);
    const head = await e.chain.committedHead();
    await expect(
      e.db.write(
        async (tx) => {
          await tx.run('CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, v INTEGER)');
          await tx.run('INSERT INTO item (id, v) VALUES (1, 1)');
          await e.chain.append(tx, entry(3));
          throw new Error('the change failed after its audit record');
        },
        { transaction: true },
      ),
    ).rejects.toThrow('the change failed');
    expect(await seqs(e.db)).toEqual([1, 2, 3]);
    expect(await e.db.get('SELECT * FROM sqlite_master WHERE name = ?', ['item'])).toBeUndefined();
    expect(await e.chain.committedHead()).toEqual(head);
    const next = await e.db.write((tx) => e.chain.append(tx, entry(4)), { transaction: true });
    expect(next).toMatchObject({ seq: 4, prevHash: head.hash });
    expect(await e.chain.verify()).toEqual({ intact: true, checked: 4, firstBrokenSeq: null });
  });

  it('orders records of concurrent writers as Database.write runs them, with no gap when one rolls back', async () => {
    const e = await env();
    await e.db.write((tx) => tx.run('CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)'));
    await e.db.write((tx) => tx.run('INSERT INTO item (id, v) VALUES (1, 0)'));
    const writes = Array.from({ length: 40 }, (_, i) =>
      e.db.write(
        async (tx) => {
          await tx.run('UPDATE item SET v = ? WHERE id = 1', [i]);
          // Yield between the change and its record so that interleaving, if any, would show.
          await new Promise((r) => setImmediate(r));
          const record = await e.chain.append(tx, entry(i, { entityId: `w${i}` }));
          if (i === 17) throw new Error('rolled back');
          return record.seq;
        },
        { transaction: true },
      ),
    );
    const results = await Promise.allSettled(writes);
    const written = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(written).toEqual(Array.from({ length: 39 }, (_, k) => k + 1));
    const rows = await e.db.all<{ seq: number; entity_id: string }>('SELECT seq, entity_id FROM audit_log ORDER BY seq');
    expect(rows.map((r) => r.entity_id)).toEqual(Array.from({ length: 40 }, (_, i) => `w${i}`).filter((id) => id !== 'w17'));
    expect(await e.chain.verify()).toEqual({ intact: true, checked: 39, firstBrokenSeq: null });
  });

  it('keeps call order for appends started together in one transaction', async () => {
    const e = await env();
    const records = await e.db.write((tx) => Promise.all([0, 1, 2, 3].map((i) => e.chain.append(tx, entry(i, { entityId: `p${i}` })))), { transaction: true });
    expect(records.map((r) => [r.seq, r.entityId])).toEqual([[1, 'p0'], [2, 'p1'], [3, 'p2'], [4, 'p3']]);
    expect(await e.chain.verify()).toMatchObject({ intact: true, checked: 4 });
  });

  it('never gives a record a time earlier than the one before, when the clock is set back', async () => {
    const e = await env();
    await fill(e, 1);
    e.clock.now -= 60_000;
    const later = await e.db.write((tx) => e.chain.append(tx, entry(1)), { transaction: true });
    expect(later.time).toBe(new Date(T0 + 1).toISOString());
  });

  it('continues the chain of an existing database after reopening, and when another writer appended', async () => {
    const e = await env();
    await fill(e, 2);
    const other = await AuditChain.open(e.db, { timeZone: 'UTC', clock: () => e.clock.now });
    await e.db.write((tx) => other.append(tx, entry(2)), { transaction: true });
    // The first instance's in-memory head is now behind; the insert guard makes it catch up.
    const next = await e.db.write((tx) => e.chain.append(tx, entry(3)), { transaction: true });
    expect(next.seq).toBe(4);
    expect(await e.chain.verify()).toMatchObject({ intact: true, checked: 4 });
  });

  it('refuses a bad entry with INVALID_PARAMETER naming the field, and writes nothing', async () => {
    const e = await env();
    const cases: [Partial<Record<string, unknown>>, string][] = [
      [{ principalName: '' }, 'principalName'],
      [{ category: undefined }, 'category'],
      [{ machine: 'x'.repeat(1025) }, 'machine'],
      [{ entityId: 'a\uD800b' }, 'entityId'],
      [{ details: [1, 2] }, 'details'],
      [{ details: { n: Number.NaN } }, 'details'],
    ];
    for (const [over, field] of cases) {
      const err = await e.db.write((tx) => e.chain.append(tx, { ...entry(0), ...over } as never), { transaction: true }).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).errorName).toBe('INVALID_PARAMETER');
      expect((err as GatewayError).message).toContain(field);
    }
    expect(await seqs(e.db)).toEqual([]);
  });

  it('is append-only in the database: UPDATE and DELETE of a record, and an insert off the head, are refused', async () => {
    const e = await env();
    await fill(e, 2);
    await expect(e.db.write((tx) => tx.run("UPDATE audit_log SET action = 'x' WHERE seq = 1"))).rejects.toThrow('append-only');
    await expect(e.db.write((tx) => tx.run('DELETE FROM audit_log WHERE seq = 2'))).rejects.toThrow('append-only');
    await expect(
      e.db.write((tx) =>
        tx.run("INSERT INTO audit_log (seq, ts, principal_name, auth_method, category, action, prev_hash, hash) VALUES (7, 0, 'm', 'x', 'x', 'x', 'h', 'h')"),
      ),
    ).rejects.toThrow('audit chain head moved');
    expect(await e.chain.verify()).toEqual({ intact: true, checked: 2, firstBrokenSeq: null });
  });
});

describe('AuditChain verify', () => {
  it('PV-15 reports intact, checked and firstBrokenSeq null for an intact chain, and for an empty one', async () => {
    const e = await env();
    expect(await e.chain.verify()).toEqual({ intact: true, checked: 0, firstBrokenSeq: null });
    await e.db.write((tx) => e.chain.appendMany(tx, Array.from({ length: 12_345 }, (_, i) => entry(i))), { transaction: true });
    // A small chunk size makes the walk cross many chunk borders.
    expect(await e.chain.verify({ chunkSize: 1000 })).toEqual({ intact: true, checked: 12_345, firstBrokenSeq: null });
    expect(await e.chain.verify({ chunkSize: 1000, parallelFrom: 1 })).toEqual({ intact: true, checked: 12_345, firstBrokenSeq: null });
  });

  const N = 10;
  const cases: { name: string; sql: [string, (string | number)[]?][]; broken: number }[] = [
    { name: 'a changed field', sql: [["UPDATE audit_log SET principal_name = 'mallory' WHERE seq = 5"]], broken: 5 },
    { name: 'changed details', sql: [[`UPDATE audit_log SET details = '{"i":6,"note":"nothing happened"}' WHERE seq = 7`]], broken: 7 },
    { name: 'a changed time', sql: [['UPDATE audit_log SET ts = ts + 1 WHERE seq = 3']], broken: 3 },
    { name: 'a changed stored hash', sql: [["UPDATE audit_log SET hash = replace(hash, substr(hash, 1, 1), 'x') WHERE seq = 8"]], broken: 8 },
    { name: 'a deleted middle record', sql: [['DELETE FROM audit_log WHERE seq = 4']], broken: 4 },
    { name: 'a deleted first record', sql: [['DELETE FROM audit_log WHERE seq = 1']], broken: 1 },
    { name: 'a deleted last record (the anchor still names it)', sql: [[`DELETE FROM audit_log WHERE seq = ${N}`]], broken: N },
    { name: 'a deleted tail of three', sql: [[`DELETE FROM audit_log WHERE seq > ${N - 3}`]], broken: N - 2 },
    {
      name: "two records' contents swapped",
      sql: [
        [`UPDATE audit_log SET seq = -3 WHERE seq = 3`],
        [`UPDATE audit_log SET seq = 3 WHERE seq = 6`],
        [`UPDATE audit_log SET seq = 6 WHERE seq = -3`],
      ],
      broken: 3,
    },
    {
      name: 'two records reordered by seq',
      sql: [[`UPDATE audit_log SET seq = -5 WHERE seq = 5`], [`UPDATE audit_log SET seq = 5 WHERE seq = 6`], [`UPDATE audit_log SET seq = 6 WHERE seq = -5`]],
      broken: 5,
    },
    { name: 'a field replaced by a BLOB', sql: [["UPDATE audit_log SET machine = x'00ff' WHERE seq = 9"]], broken: 9 },
    { name: 'a time replaced by text', sql: [["UPDATE audit_log SET ts = 'yesterday' WHERE seq = 2"]], broken: 2 },
    {
      name: 'a forged record behind the anchor, at the end, linked to the last hash',
      sql: [
        [
          `INSERT INTO audit_log (seq, ts, principal_name, auth_method, category, action, prev_hash, hash)
           SELECT seq + 1, ts + 1, 'mallory', 'session', 'vault', 'delete', hash, hash FROM audit_log WHERE seq = ${N}`,
        ],
      ],
      broken: N + 1,
    },
    {
      name: 'a forged record in place of a deleted one',
      sql: [
        ['DELETE FROM audit_log WHERE seq = 6'],
        [
          `INSERT INTO audit_log (seq, ts, principal_name, auth_method, category, action, prev_hash, hash)
           SELECT 6, ts + 1, 'mallory', 'session', 'vault', 'delete', hash, hash FROM audit_log WHERE seq = 5`,
        ],
      ],
      broken: 6,
    },
  ];
  for (const c of cases) {
    it(`PV-15 names the first broken seq after ${c.name}`, async () => {
      const e = await env();
      await fill(e, N);
      expect(await e.chain.verify()).toEqual({ intact: true, checked: N, firstBrokenSeq: null });
      await tamper(e.db, c.sql);
      const expected = { intact: false, checked: c.broken - 1, firstBrokenSeq: c.broken };
      expect(await e.chain.verify({ chunkSize: 3 })).toEqual(expected);
      // Walked as two halves (seqs 1-5 and 6 on, seam at 6), the same seq is named.
      expect(await e.chain.verify({ chunkSize: 3, parallelFrom: 1 })).toEqual(expected);
    });
  }

  it('walks as one on the read connection when a second connection to the file cannot be opened', async () => {
    const e = await env();
    await fill(e, 6);
    unlinkSync(e.db.file);
    expect(await e.chain.verify({ chunkSize: 2, parallelFrom: 1 })).toEqual({ intact: true, checked: 6, firstBrokenSeq: null });
  });

  describe('PV-15 walked as two halves at once (40 records: 1-20 and 21-40, seam record 21)', () => {
    const M = 40;
    const halves = { chunkSize: 7, parallelFrom: 1 };
    async function rehashed(e: Awaited<ReturnType<typeof env>>, seq: number) {
      const row = await e.db.get<Record<string, string | number | null>>('SELECT * FROM audit_log WHERE seq = ?', [seq]);
      const { recordHash, hashedFieldsOf } = await import('../../../../../core/roles/programs/audit/record.js');
      const forged = { ...(row as never as Parameters<typeof hashedFieldsOf>[0]), principal_name: 'mallory' };
      return recordHash(hashedFieldsOf(forged));
    }
    const seamCases: { name: string; sql: (e: Awaited<ReturnType<typeof env>>) => Promise<[string, (string | number)[]?][]>; broken: number }[] = [
      { name: 'the seam record changed', sql: async () => [["UPDATE audit_log SET principal_name = 'mallory' WHERE seq = 21"]], broken: 21 },
      { name: 'the seam record deleted', sql: async () => [['DELETE FROM audit_log WHERE seq = 21']], broken: 21 },
      { name: 'the last record of the first half deleted', sql: async () => [['DELETE FROM audit_log WHERE seq = 20']], broken: 20 },
      {
        name: 'the last record of the first half changed and re-hashed (the seam no longer links)',
        sql: async (e) => [["UPDATE audit_log SET principal_name = 'mallory', hash = ? WHERE seq = 20", [await rehashed(e, 20)]]],
        broken: 21,
      },
      {
        name: 'the seam record changed and re-hashed',
        sql: async (e) => [["UPDATE audit_log SET principal_name = 'mallory', hash = ? WHERE seq = 21", [await rehashed(e, 21)]]],
        broken: 22,
      },
      { name: 'the seam prevHash changed', sql: async () => [["UPDATE audit_log SET prev_hash = 'f' || substr(prev_hash, 2) WHERE seq = 21"]], broken: 21 },
      { name: 'a record in the second half changed', sql: async () => [["UPDATE audit_log SET details = '{}' WHERE seq = 33"]], broken: 33 },
      {
        name: 'records in both halves changed',
        sql: async () => [["UPDATE audit_log SET action = 'x' WHERE seq = 35"], ["UPDATE audit_log SET action = 'x' WHERE seq = 12"]],
        broken: 12,
      },
      {
        name: 'the seam changed and a later second-half record changed',
        sql: async () => [["UPDATE audit_log SET machine = 'M9' WHERE seq = 38"], ["UPDATE audit_log SET prev_hash = 'x' WHERE seq = 21"]],
        broken: 21,
      },
      {
        name: 'records swapped across the seam',
        sql: async () => [['UPDATE audit_log SET seq = -19 WHERE seq = 19'], ['UPDATE audit_log SET seq = 19 WHERE seq = 23'], ['UPDATE audit_log SET seq = 23 WHERE seq = -19']],
        broken: 19,
      },
      { name: 'the second half deleted (anchor left)', sql: async () => [['DELETE FROM audit_log WHERE seq > 20']], broken: 21 },
      { name: 'the anchor hash changed', sql: async () => [["UPDATE audit_head SET hash = 'f' || substr(hash, 2)"]], broken: M },
    ];
    for (const c of seamCases) {
      it(`names the same first broken seq as a single walk after ${c.name}`, async () => {
        const e = await env();
        await e.db.write((tx) => e.chain.appendMany(tx, Array.from({ length: M }, (_, i) => entry(i))), { transaction: true });
        expect(await e.chain.verify(halves)).toEqual({ intact: true, checked: M, firstBrokenSeq: null });
        await tamper(e.db, await c.sql(e));
        const expected = { intact: false, checked: c.broken - 1, firstBrokenSeq: c.broken };
        expect(await e.chain.verify({ chunkSize: 7 })).toEqual(expected);
        expect(await e.chain.verify(halves)).toEqual(expected);
      });
    }
  });

  it('PV-15 names the next seq when a changed record was re-hashed: its successor no longer links to it', async () => {
    const e = await env();
    await fill(e, N);
    const row = await e.db.get<Record<string, string | number | null>>('SELECT * FROM audit_log WHERE seq = 4');
    const { recordHash, hashedFieldsOf } = await import('../../../../../core/roles/programs/audit/record.js');
    const forged = { ...(row as never as Parameters<typeof hashedFieldsOf>[0]), principal_name: 'mallory' };
    await tamper(e.db, [["UPDATE audit_log SET principal_name = 'mallory', hash = ? WHERE seq = 4", [recordHash(hashedFieldsOf(forged))]]]);
    expect(await e.chain.verify()).toEqual({ intact: false, checked: 4, firstBrokenSeq: 5 });
  });

  it('names the last seq when the anchor disagrees with the last record, and seq 1 when records lie beyond a deleted anchor', async () => {
    const e = await env();
    await fill(e, N);
    await tamper(e.db, [["UPDATE audit_head SET hash = 'f' || substr(hash, 2)"]]);
    expect(await e.chain.verify()).toEqual({ intact: false, checked: N - 1, firstBrokenSeq: N });
    await tamper(e.db, [['DELETE FROM audit_head']]);
    expect(await e.chain.verify()).toEqual({ intact: false, checked: 0, firstBrokenSeq: 1 });
  });

  it('cannot see a tail rewritten with every hash recomputed and the anchor moved; the head hash for external anchoring changes', async () => {
    const e = await env();
    await fill(e, N);
    const anchored = await e.chain.committedHead();
    const { recordHash, hashedFieldsOf } = await import('../../../../../core/roles/programs/audit/record.js');
    type Row = Parameters<typeof hashedFieldsOf>[0];
    const rows = await e.db.all<Row>('SELECT * FROM audit_log WHERE seq >= 8 ORDER BY seq');
    let prev = (await e.db.get<{ hash: string }>('SELECT hash FROM audit_log WHERE seq = 7'))!.hash;
    const statements: [string, (string | number)[]][] = [];
    for (const row of rows) {
      const forged = { ...row, principal_name: 'mallory', prev_hash: prev };
      prev = recordHash(hashedFieldsOf(forged));
      statements.push(["UPDATE audit_log SET principal_name = 'mallory', prev_hash = ?, hash = ? WHERE seq = ?", [forged.prev_hash, prev, row.seq]]);
    }
    statements.push(['UPDATE audit_head SET hash = ? WHERE id = 1', [prev]]);
    await tamper(e.db, statements);
    expect(await e.chain.verify()).toEqual({ intact: true, checked: N, firstBrokenSeq: null });
    expect((await e.chain.committedHead()).hash).not.toBe(anchored.hash);
  });
});
