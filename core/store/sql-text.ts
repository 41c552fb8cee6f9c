/**
 * What the PostgreSQL engine does to portable SQL text before sending it:
 * `?` placeholders become `$1, $2, …` (once per statement text, cached), and
 * a portable migration's SQLite type names become PostgreSQL's with the same
 * meaning. Both only touch SQL code: never a quoted string or identifier,
 * a comment, or a dollar-quoted body. docs/databases.md has the rules.
 */

/** Splits SQL into code and the parts that are not code (quoted text, quoted identifiers, comments, dollar-quoted bodies). */
function segments(sql: string): { code: boolean; text: string }[] {
  const out: { code: boolean; text: string }[] = [];
  let codeStart = 0;
  let i = 0;
  const skipTo = (end: number) => {
    if (i > codeStart) out.push({ code: true, text: sql.slice(codeStart, i) });
    out.push({ code: false, text: sql.slice(i, end) });
    i = end;
    codeStart = end;
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === "'") {
      // E'…' strings take backslash escapes; '' inside any string is a quote.
      const escapes = (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !/[\w$]/.test(sql[i - 2] ?? '');
      let j = i + 1;
      while (j < sql.length && sql[j] !== "'") j += escapes && sql[j] === '\\' ? 2 : 1;
      skipTo(Math.min(j + 1, sql.length));
    } else if (c === '"') {
      const j = sql.indexOf('"', i + 1);
      skipTo(j < 0 ? sql.length : j + 1);
    } else if (c === '-' && next === '-') {
      const j = sql.indexOf('\n', i);
      skipTo(j < 0 ? sql.length : j);
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      skipTo(j < 0 ? sql.length : j + 2);
    } else if (c === '$' && !/[\w$]/.test(sql[i - 1] ?? '')) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))?.[0];
      if (tag === undefined) {
        i++;
        continue;
      }
      const j = sql.indexOf(tag, i + tag.length);
      skipTo(j < 0 ? sql.length : j + tag.length);
    } else {
      i++;
    }
  }
  if (codeStart < sql.length) out.push({ code: true, text: sql.slice(codeStart) });
  return out;
}

/** Statement texts kept; a statement built with a varying number of rows is one text per row count. */
const CACHE_LIMIT = 2000;
const positional = new Map<string, string>();

/** The statement with each `?` outside quotes and comments numbered `$1, $2, …` in order; cached per text. */
export function toPositional(sql: string): string {
  const cached = positional.get(sql);
  if (cached !== undefined) return cached;
  let text = sql;
  if (sql.includes('?')) {
    let n = 0;
    text = segments(sql)
      .map((s) => (s.code ? s.text.replace(/\?/g, () => `$${++n}`) : s.text))
      .join('');
  }
  if (positional.size >= CACHE_LIMIT) positional.delete(positional.keys().next().value as string);
  positional.set(sql, text);
  return text;
}

/**
 * SQLite type names as PostgreSQL types of the same range: SQLite's INTEGER
 * holds 64 bits (BIGINT), BLOB is BYTEA, REAL is an 8-byte float.
 */
const TYPE_NAMES: Record<string, string> = { INTEGER: 'BIGINT', INT: 'BIGINT', BLOB: 'BYTEA', REAL: 'DOUBLE PRECISION' };
const TYPE_WORD = /\b(INTEGER|INT|BLOB|REAL)\b/gi;

/** SQLite constructs with no PostgreSQL meaning, which a portable migration must not use. */
const NOT_PORTABLE: readonly [RegExp, string][] = [
  [/\bAUTOINCREMENT\b/i, 'AUTOINCREMENT'],
  [/\bINSERT\s+OR\s+(IGNORE|REPLACE)\b/i, 'INSERT OR IGNORE/REPLACE (write INSERT … ON CONFLICT … DO NOTHING/UPDATE)'],
  [/\bWITHOUT\s+ROWID\b/i, 'WITHOUT ROWID'],
  [/\bPRAGMA\b/i, 'PRAGMA'],
];

/** The first construct of `statement` that only SQLite knows, or undefined. */
export function notPortable(statement: string): string | undefined {
  const code = segments(statement).filter((s) => s.code).map((s) => s.text).join(' ');
  return NOT_PORTABLE.find(([pattern]) => pattern.test(code))?.[1];
}

/** A portable migration statement as PostgreSQL runs it: SQLite type names replaced, nothing else touched. */
export function postgresDdl(statement: string): string {
  return segments(statement)
    .map((s) => (s.code ? s.text.replace(TYPE_WORD, (word) => TYPE_NAMES[word.toUpperCase()] ?? word) : s.text))
    .join('');
}
