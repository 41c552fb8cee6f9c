// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * House rules on imports (docs/architecture.md, "House rules"). Imports are
 * relative, so each rule is written per directory depth: at depth d,
 * `../` × d is the top of the file's area. A file matches exactly one block,
 * because a later block's `no-restricted-imports` replaces an earlier one.
 */
const MAX_DEPTH = 6;
const up = (n) => '(\\.\\./)'.concat(`{${n}}`);

/**
 * The composition roots: the only files outside test/ that wire plugins and drivers together, one per
 * role in its wing (its plugin list), and the drivers' registry and simulators.
 */
const COMPOSITION_ROOTS = ['core/roles/gateway/compose.ts', 'core/roles/programs/compose.ts', 'core/roles/cloud/compose.ts', 'drivers/registry.ts', 'drivers/sim-main.ts', 'drivers/simulators.ts'];

/** `files` glob for the TypeScript files exactly `depth` directories below `area`. */
const atDepth = (area, depth) => [`${area}/${'*/'.repeat(depth - 1)}*.ts`];

const importRules = [];
for (let d = 1; d <= MAX_DEPTH; d++) {
  // plugins/<x>/…: `../` × d lands in plugins/, so any import that goes exactly that far up reaches another plugin.
  if (d >= 2) {
    importRules.push({
      files: atDepth('plugins', d),
      ignores: COMPOSITION_ROOTS,
      rules: {
        'no-restricted-imports': ['error', {
          patterns: [
            { regex: `^${up(d - 1)}(?!\\.\\./)`, message: 'A plugin must not import another plugin: lift shared code into core/ or meet through the interface registry and the event bus.' },
            { regex: `^${up(d)}(plugins|drivers)(/|$)`, message: 'A plugin must not import plugins/ or drivers/: only the composition roots wire them (see eslint.config.js).' },
          ],
        }],
      },
    });
  }
  importRules.push({
    files: atDepth('core', d),
    ignores: COMPOSITION_ROOTS,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ regex: `^${up(d)}(plugins|drivers)(/|$)`, message: 'core/ must not import plugins/ or drivers/: pass what it needs in, or list it in the role\'s composition root (core/roles/<role>/compose.ts).' }],
      }],
    },
  });
  importRules.push({
    files: atDepth('drivers', d),
    ignores: COMPOSITION_ROOTS,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ regex: `^${up(d)}plugins(/|$)`, message: 'A driver must not import plugins/: only the composition roots wire them.' }],
      }],
    },
  });
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', '.tmp/**', 'plugins/console/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  ...importRules,
);
