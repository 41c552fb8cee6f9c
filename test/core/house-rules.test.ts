/** The house rules on imports are lint errors (eslint.config.js): these snippets prove the rules bite where they should, and only there. */
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The no-restricted-imports messages ESLint reports for `source` as if it were the file at `filePath`. */
async function restrictedImports(filePath: string, source: string): Promise<string[]> {
  const code = `import { x } from '${source}';\nexport const y = x;\n`;
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, filePath) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('house rules on imports', () => {
  it('a plugin importing another plugin is a lint error, at any depth inside the plugin', async () => {
    expect(await restrictedImports('plugins/history/new-read.ts', '../auth/tokens.js')).toEqual([expect.stringMatching(/must not import another plugin/)]);
    expect(await restrictedImports('plugins/vault/nc/diff.ts', '../../auth/tokens.js')).toEqual([expect.stringMatching(/must not import another plugin/)]);
    expect(await restrictedImports('plugins/history/new-read.ts', '../index.js')).toEqual([expect.stringMatching(/must not import another plugin/)]);
    expect(await restrictedImports('plugins/history/new-read.ts', '../../plugins/auth/tokens.js')).toEqual([expect.stringMatching(/must not import plugins/)]);
    expect(await restrictedImports('plugins/history/new-read.ts', '../../drivers/registry.js')).toEqual([expect.stringMatching(/must not import plugins\/ or drivers/)]);
  });

  it('a plugin may import its own files, core/ and config/', async () => {
    for (const [file, source] of [
      ['plugins/history/new-read.ts', './classes.js'],
      ['plugins/history/new-read.ts', '../../core/interfaces.js'],
      ['plugins/history/new-read.ts', '../../config/schema.js'],
      ['plugins/vault/nc/diff.ts', '../index.js'],
      ['plugins/vault/nc/diff.ts', '../../../core/auth/passwords.js'],
    ] as const) {
      expect(await restrictedImports(file, source), `${file} → ${source}`).toEqual([]);
    }
  });

  it('core/ and drivers/ importing plugins/ (or core/ importing drivers/) is a lint error; each role\'s composition root and tests may', async () => {
    expect(await restrictedImports('core/store/new-store.ts', '../../plugins/auth/user-store.js')).toEqual([expect.stringMatching(/core\/ must not import/)]);
    expect(await restrictedImports('core/gateway.ts', '../drivers/registry.js')).toEqual([expect.stringMatching(/core\/ must not import/)]);
    expect(await restrictedImports('core/fleet/a/b.ts', '../../../plugins/index.js')).toEqual([expect.stringMatching(/core\/ must not import/)]);
    expect(await restrictedImports('drivers/mqtt/new-map.ts', '../../plugins/auth/tokens.js')).toEqual([expect.stringMatching(/driver must not import plugins/)]);
    expect(await restrictedImports('drivers/mqtt/new-map.ts', '../simulator/model.js')).toEqual([]);
    expect(await restrictedImports('core/main.ts', '../plugins/auth/index.js')).toEqual([expect.stringMatching(/core\/ must not import/)]);
    expect(await restrictedImports('core/roles/gateway/definition.ts', '../../../plugins/auth/index.js')).toEqual([expect.stringMatching(/core\/ must not import/)]);
    expect(await restrictedImports('core/roles/gateway/compose.ts', '../../../plugins/auth/index.js')).toEqual([]);
    expect(await restrictedImports('core/roles/gateway/compose.ts', '../../../drivers/registry.js')).toEqual([]);
    expect(await restrictedImports('core/roles/programs/compose.ts', '../../../plugins/vault/index.js')).toEqual([]);
    expect(await restrictedImports('core/roles/cloud/compose.ts', '../../../plugins/mcp/tools.js')).toEqual([]);
    expect(await restrictedImports('plugins/auth/reset-command.ts', './password-reset.js')).toEqual([]);
    expect(await restrictedImports('test/plugins/new.test.ts', '../../plugins/auth/tokens.js')).toEqual([]);
  });
});
