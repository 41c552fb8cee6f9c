/** The house rules on imports and function length are lint errors (eslint.config.js): these snippets prove the rules bite where they should, and only there. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cruise, type IConfiguration } from 'dependency-cruiser';
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
      ['plugins/history/new-read.ts', '../../core/interfaces/registry.js'],
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
    expect(await restrictedImports('core/main.ts', '../plugins/auth/index.js')).toEqual([expect.stringMatching(/core\/main.ts must not import plugins/)]);
    expect(await restrictedImports('core/roles/gateway/definition.ts', '../../../plugins/auth/index.js')).toEqual([expect.stringMatching(/wing outside its compose.ts .* must not import plugins/)]);
    expect(await restrictedImports('core/roles/gateway/compose.ts', '../../../plugins/auth/index.js')).toEqual([]);
    expect(await restrictedImports('core/roles/gateway/compose.ts', '../../../drivers/registry.js')).toEqual([]);
    expect(await restrictedImports('core/roles/programs/compose.ts', '../../../plugins/vault/index.js')).toEqual([]);
    expect(await restrictedImports('core/roles/cloud/compose.ts', '../../../plugins/mcp/tools.js')).toEqual([]);
    expect(await restrictedImports('plugins/auth/reset-command.ts', './password-reset.js')).toEqual([]);
    expect(await restrictedImports('test/plugins/new.test.ts', '../../plugins/auth/tokens.js')).toEqual([]);
  });
});

describe('house rules on wings', () => {
  it('a wing importing another wing or the role list is a lint error; its own files and the runtime are not', async () => {
    expect(await restrictedImports('core/roles/gateway/fleet/x.ts', '../../programs/context.js')).toEqual([expect.stringMatching(/gateway wing must not import another role's wing/)]);
    expect(await restrictedImports('core/roles/cloud/relay.ts', '../gateway/context.js')).toEqual([expect.stringMatching(/cloud wing must not import another role's wing/)]);
    expect(await restrictedImports('core/roles/programs/audit/chain.ts', '../../index.js')).toEqual([expect.stringMatching(/must not import the role list/)]);
    expect(await restrictedImports('core/roles/cloud/compose.ts', '../gateway/compose.js')).toEqual([expect.stringMatching(/cloud wing must not import another role's wing/)]);
    expect(await restrictedImports('core/roles/gateway/fleet/x.ts', '../context.js')).toEqual([]);
    expect(await restrictedImports('core/roles/gateway/fleet/x.ts', '../../../mcp/dispatch.js')).toEqual([]);
    expect(await restrictedImports('core/roles/programs/audit/chain.ts', '../../../store/database.js')).toEqual([]);
  });

  it('the gateway\'s contract is open to the runtime and the other wings; the rest of its wing is not', async () => {
    expect(await restrictedImports('core/gateway-link/x.ts', '../roles/gateway/contract/configuration.js')).toEqual([]);
    expect(await restrictedImports('core/roles/programs/x.ts', '../gateway/contract/task-data.js')).toEqual([]);
    expect(await restrictedImports('core/roles/cloud/commands/x.ts', '../../gateway/contract/system.js')).toEqual([]);
    expect(await restrictedImports('core/gateway-link/x.ts', '../roles/gateway/machine-config.js')).toEqual([expect.stringMatching(/runtime .* must not import a role's wing/)]);
    expect(await restrictedImports('core/roles/programs/x.ts', '../gateway/api-outputs.js')).toEqual([expect.stringMatching(/programs wing must not import another role's wing/)]);
  });

  it('the runtime importing a wing is a lint error; core/main.ts reaches the roles only through their list', async () => {
    expect(await restrictedImports('core/mcp/x.ts', '../roles/gateway/context.js')).toEqual([expect.stringMatching(/runtime .* must not import a role's wing/)]);
    expect(await restrictedImports('core/runtime/event-bus.ts', '../roles/gateway/events.js')).toEqual([expect.stringMatching(/runtime .* must not import a role's wing/)]);
    expect(await restrictedImports('core/main.ts', './roles/gateway/definition.js')).toEqual([expect.stringMatching(/through their list/)]);
    expect(await restrictedImports('core/main.ts', './roles/index.js')).toEqual([]);
    expect(await restrictedImports('core/roles/index.ts', './gateway/definition.js')).toEqual([]);
  });

  it('a plugin importing a wing\'s compose.ts or definition.ts, or a driver importing a wing, is a lint error', async () => {
    expect(await restrictedImports('plugins/mcp/x.ts', '../../core/roles/gateway/compose.js')).toEqual([expect.stringMatching(/must not import a role's composition or definition/)]);
    expect(await restrictedImports('plugins/vault/x.ts', '../../core/roles/programs/definition.js')).toEqual([expect.stringMatching(/must not import a role's composition or definition/)]);
    expect(await restrictedImports('plugins/vault/x.ts', '../../core/roles/programs/context.js')).toEqual([]);
    expect(await restrictedImports('plugins/console/web/programs/x.tsx', '../../../mcp/tools.js')).toEqual([expect.stringMatching(/must not import another plugin/)]);
    expect(await restrictedImports('drivers/modbus/x.ts', '../../core/roles/gateway/context.js')).toEqual([expect.stringMatching(/driver must not import a role's wing/)]);
    expect(await restrictedImports('drivers/modbus/x.ts', '../../core/driver-seam/driver.js')).toEqual([]);
  });
});

describe('house rules on config/', () => {
  it('config/ importing a wing, a plugin or a driver is a lint error; core/ is not', async () => {
    expect(await restrictedImports('config/schema.ts', '../core/roles/programs/config.js')).toEqual([expect.stringMatching(/config\/ must not import a role's wing/)]);
    expect(await restrictedImports('config/schema.ts', '../plugins/mcp/config.js')).toEqual([expect.stringMatching(/config\/ must not import plugins/)]);
    expect(await restrictedImports('config/schema.ts', '../drivers/registry.js')).toEqual([expect.stringMatching(/config\/ must not import plugins/)]);
    expect(await restrictedImports('config/schema.ts', '../core/tls.js')).toEqual([]);
  });
});

/** The import cycles the lint's dependency-cruiser rules find among `files` (name → source), written to a fresh directory. */
async function cyclesAmong(files: Record<string, string>): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'cycle-probe-'));
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    const cycleRules = ((await import(pathToFileURL(join(ROOT, '.dependency-cruiser.mjs')).href)) as { default: IConfiguration }).default;
    const { tsConfig: _projectOnly, ...options } = cycleRules.options ?? {};
    const result = await cruise([dir], { ...options, validate: true, ruleSet: { forbidden: cycleRules.forbidden } });
    if (typeof result.output === 'string') throw new Error('dependency-cruiser answered text, not a result');
    return result.output.summary.violations.map((v) => [v.rule.name, ...(v.cycle ?? []).map((step) => step.name.slice(step.name.lastIndexOf('/') + 1))]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('house rules on import cycles', () => {
  it('two files importing each other are a lint error, type-only imports included; a file importing another without a way back is not', async () => {
    expect(await cyclesAmong({
      'a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    })).toEqual([['no-import-cycle', 'b.ts', 'a.ts']]);
    expect(await cyclesAmong({
      'a.ts': "import { c } from './c.js';\nexport const a = c + 1;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = a + 1;\n",
      'c.ts': "import { b } from './b.js';\nexport const c = () => b;\n",
    })).toEqual([['no-import-cycle', expect.any(String), expect.any(String), expect.any(String)]]);
    expect(await cyclesAmong({
      'a.ts': "import { c } from './c.js';\nexport const a = c + 1;\n",
      'c.ts': 'export const c = 1;\n',
    })).toEqual([]);
  });
});

/** The max-lines-per-function errors ESLint reports for `source` as the file at `filePath`. */
async function lengthErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: resolve(ROOT, filePath) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'max-lines-per-function').map((m) => m.message);
}

const functionOf = (lines: number, before = '') =>
  `${before}export function long(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(lines - 4)}  return n;\n}\n`;

describe('house rules on function length', () => {
  it('a function of 101 lines is a lint error in code, not in a test, and not where a disable comment gives its reason', async () => {
    expect(await lengthErrors('core/x.ts', functionOf(100))).toEqual([]);
    expect(await lengthErrors('core/x.ts', functionOf(101))).toEqual([expect.stringMatching(/too many lines \(101\)/)]);
    expect(await lengthErrors('plugins/vault/x.ts', functionOf(120))).toEqual([expect.stringMatching(/too many lines \(120\)/)]);
    expect(await lengthErrors('test/x.test.ts', functionOf(150))).toEqual([]);
    expect(await lengthErrors('core/x.ts', functionOf(150, '// eslint-disable-next-line max-lines-per-function -- a table of every call, one line each\n'))).toEqual([]);
  });

  it('every disable of the length rule in the repository gives its reason after --', () => {
    const unexplained: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (['node_modules', 'dist', 'data', '.git', '.tmp'].includes(entry.name)) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.tsx?$/.test(entry.name) && path !== import.meta.filename) {
          for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
            if (/eslint-disable.*max-lines-per-function/.test(line) && !/max-lines-per-function\s+--\s+\S/.test(line)) unexplained.push(`${relative(ROOT, path)}:${i + 1}`);
          }
        }
      }
    };
    walk(ROOT);
    expect(unexplained).toEqual([]);
  });
});

describe('house rules on the layout of core/', () => {
  it('core/ holds folders and its entry point only, and docs/architecture.md names every folder, so that `ls core` reads as a map of the runtime', () => {
    const entries = readdirSync(join(ROOT, 'core'), { withFileTypes: true });
    expect(entries.filter((e) => !e.isDirectory()).map((e) => e.name)).toEqual(['main.ts']);
    const map = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('## What is where in core/')[1]?.split('\n## ')[0] ?? '';
    const unnamed = entries.filter((e) => e.isDirectory() && !map.includes(`\`${e.name}/\``)).map((e) => e.name);
    expect(unnamed).toEqual([]);
  });
});
