/**
 * Hunks rendered as unified diff text (`diff -u` format). With every ignore
 * rule off the hunks are those of a plain text diff and this text matches
 * `diff -u` after its two header lines; with rules on, blocks that are empty
 * once canonicalised are not listed, so the text shows the NC-aware hunks,
 * not a patch.
 */
import type { Hunk } from './hunks.js';

/** Where a program's last line has no line ending (0 when it has one). */
export interface MissingNewline {
  fromLine: number;
  toLine: number;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** The unified diff text of `hunks`, headed `--- from` / `+++ to`. */
export function renderUnified(hunks: readonly Hunk[], missing: MissingNewline, labels = { from: 'from', to: 'to' }): string {
  const out: string[] = [];
  if (hunks.length === 0) return '';
  out.push(`--- ${labels.from}`, `+++ ${labels.to}`);
  const noNewline = '\\ No newline at end of file';
  for (const hunk of hunks) {
    out.push(`@@ -${range(hunk.fromStart, hunk.fromCount)} +${range(hunk.toStart, hunk.toCount)} @@`);
    for (const line of hunk.lines) {
      out.push(`${line.op}${line.text}`);
      const lastFrom = line.op !== '+' && line.fromLine === missing.fromLine;
      const lastTo = line.op !== '-' && line.toLine === missing.toLine;
      if (lastFrom || lastTo) out.push(noNewline);
    }
  }
  return `${out.join('\n')}\n`;
}
