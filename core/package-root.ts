/** The directory holding the gateway's package.json, whether running from sources or from dist/. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
  return dir;
}

export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
