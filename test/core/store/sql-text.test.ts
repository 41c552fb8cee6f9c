/** The SQL text the PostgreSQL engine sends: numbered placeholders, and portable migrations in PostgreSQL's type names. */
import { describe, expect, it } from 'vitest';
import { statementsFor, type Migration } from '../../../core/store/migrations.js';
import { notPortable, postgresDdl, toPositional } from '../../../core/store/sql-text.js';

describe('placeholders', () => {
  it('numbers each ? in order', () => {
    expect(toPositional('SELECT * FROM t WHERE a = ? AND b IN (?, ?) LIMIT ?')).toBe('SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) LIMIT $4');
    expect(toPositional('SELECT 1')).toBe('SELECT 1');
  });

  it('leaves a ? inside quoted text, quoted names, comments and dollar-quoted bodies', () => {
    expect(toPositional(`SELECT 'a?''b?' , ? , "c?" -- d?\n, ? /* e? */`)).toBe(`SELECT 'a?''b?' , $1 , "c?" -- d?\n, $2 /* e? */`);
    expect(toPositional(`SELECT E'it\\'s ?', ?`)).toBe(`SELECT E'it\\'s ?', $1`);
    expect(toPositional('SELECT $$ ? $$, $body$ it is ? $body$, ?')).toBe('SELECT $$ ? $$, $body$ it is ? $body$, $1');
    // Without the E, a backslash is an ordinary character and the quote after it ends the string.
    expect(toPositional(`SELECT 'a\\', ?`)).toBe(`SELECT 'a\\', $1`);
  });

  it('gives the same text for a statement seen again (from its cache)', () => {
    const sql = 'UPDATE t SET a = ? WHERE id = ?';
    expect(toPositional(sql)).toBe('UPDATE t SET a = $1 WHERE id = $2');
    expect(toPositional(sql)).toBe('UPDATE t SET a = $1 WHERE id = $2');
  });
});

describe('portable migrations on PostgreSQL', () => {
  it('turns SQLite type names into the PostgreSQL types of the same range, and nothing else', () => {
    expect(postgresDdl('CREATE TABLE t (id INTEGER PRIMARY KEY, n int, data BLOB, r REAL, integer_count TEXT, "REAL" TEXT DEFAULT \'INTEGER\') -- BLOB'))
      .toBe('CREATE TABLE t (id BIGINT PRIMARY KEY, n BIGINT, data BYTEA, r DOUBLE PRECISION, integer_count TEXT, "REAL" TEXT DEFAULT \'INTEGER\') -- BLOB');
  });

  it('names the SQLite-only construct of a statement, wherever it is code', () => {
    expect(notPortable('CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT)')).toBe('AUTOINCREMENT');
    expect(notPortable('insert  or ignore into t values (1)')).toMatch(/^INSERT OR IGNORE\/REPLACE/);
    expect(notPortable('CREATE TABLE t (id TEXT PRIMARY KEY) WITHOUT ROWID')).toBe('WITHOUT ROWID');
    expect(notPortable('PRAGMA foreign_keys = ON')).toBe('PRAGMA');
    expect(notPortable("INSERT INTO notes (text) VALUES ('INSERT OR IGNORE, AUTOINCREMENT')")).toBeUndefined();
  });

  it('runs a migration\'s statements as each engine runs them, and refuses SQLite-only SQL on PostgreSQL naming the way out', () => {
    const portable: Migration = { id: 1, name: 'p', up: ['CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)'] };
    expect(statementsFor(portable, 'sqlite')).toEqual(['CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)']);
    expect(statementsFor(portable, 'postgres')).toEqual(['CREATE TABLE t (id BIGINT PRIMARY KEY, b BYTEA)']);
    const perEngine: Migration = { id: 2, name: 'e', up: { sqlite: ['CREATE INDEX a ON t (id)'], postgres: ['CREATE INDEX a ON t USING brin (id)'] } };
    expect(statementsFor(perEngine, 'sqlite')).toEqual(['CREATE INDEX a ON t (id)']);
    expect(statementsFor(perEngine, 'postgres')).toEqual(['CREATE INDEX a ON t USING brin (id)']);
    expect(statementsFor({ id: 3, name: 'f', up: async () => undefined }, 'postgres')).toBeUndefined();
    const sqliteOnly: Migration = { id: 4, name: 's', up: ['CREATE TABLE q (id INTEGER PRIMARY KEY AUTOINCREMENT)'] };
    expect(statementsFor(sqliteOnly, 'sqlite')).toEqual(sqliteOnly.up);
    expect(() => statementsFor(sqliteOnly, 'postgres')).toThrow(/AUTOINCREMENT is SQLite's only: give this migration its statements per engine \(\{ sqlite: \[\.\.\.\], postgres: \[\.\.\.\] \}\)/);
  });
});
