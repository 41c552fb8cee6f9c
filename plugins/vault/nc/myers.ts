/**
 * Myers' O((N+M)·D) shortest edit script between two ranges of block ids,
 * stopping early once it would need more than `maxD` edits or more work than
 * the budget has left. Exact (minimal) when it finishes.
 */

/** Work still allowed for the whole diff, in compared elements. */
export interface WorkBudget {
  left: number;
}

/**
 * Appends the equal runs `[aStart, bStart, length]` of a shortest edit script
 * of `a[a0..a1)` against `b[b0..b1)` to `runs`. Returns false, appending
 * nothing, when the edit distance exceeds `maxD` or the budget runs out.
 */
export function myersRuns(a: Int32Array, a0: number, a1: number, b: Int32Array, b0: number, b1: number, maxD: number, budget: WorkBudget, runs: number[]): boolean {
  const n = a1 - a0;
  const m = b1 - b0;
  const max = Math.min(n + m, maxD);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds V over the diagonals -d..d after step d, for the walk back.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    let work = 2 * d + 1;
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number)) ? (v[offset + k + 1] as number) : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
        x++;
        y++;
      }
      work += x - x0;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        trace.push(v.slice(offset - d, offset + d + 1));
        walkBack(trace, d, n, m, a0, b0, runs);
        budget.left -= work;
        return true;
      }
    }
    budget.left -= work;
    if (budget.left < 0) return false;
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  return false;
}

function walkBack(trace: Int32Array[], dEnd: number, n: number, m: number, a0: number, b0: number, runs: number[]): void {
  const found: number[] = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const prev = trace[d - 1] as Int32Array; // diagonals -(d-1)..(d-1), index k + d - 1
    const k = x - y;
    const down = k === -d || (k !== d && (prev[k - 1 + d - 1] as number) < (prev[k + 1 + d - 1] as number));
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[prevK + d - 1] as number;
    const prevY = prevX - prevK;
    const startX = down ? prevX : prevX + 1;
    const startY = startX - k;
    if (x > startX) found.push(a0 + startX, b0 + startY, x - startX);
    x = prevX;
    y = prevY;
  }
  if (x > 0) found.push(a0, b0, x);
  for (let i = found.length - 3; i >= 0; i -= 3) runs.push(found[i] as number, found[i + 1] as number, found[i + 2] as number);
}
