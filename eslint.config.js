// @ts-check
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * House rules (docs/architecture.md, "House rules"), on imports and on the
 * length of functions.
 *
 * - core/ outside core/roles/ is the runtime: it imports no role's wing, no
 *   plugin and no driver. core/main.ts reaches the roles only through their
 *   list, core/roles/index.ts.
 * - A wing (core/roles/<role>/) imports no other wing and not the role list;
 *   only its compose.ts imports plugins/ and drivers/.
 * - A plugin imports no other plugin, no driver and no wing's compose.ts or
 *   definition.ts.
 * - A driver imports no plugin and no wing.
 * - config/ (the runtime's keys) imports no plugin, no driver and no wing.
 * - The gateway's contract (core/roles/gateway/contract/) is open to every
 *   part: the runtime and the other wings may import it.
 *
 * Import cycles are refused by dependency-cruiser (.dependency-cruiser.mjs),
 * which `npm run lint` runs after ESLint.
 *
 * Imports are relative, so each rule is written per directory depth: at
 * depth d, `../` × d is the repository's top. A file matches exactly one
 * `no-restricted-imports` block, because a later block's replaces an earlier one.
 */
const MAX_DEPTH = 7;
const up = (n) => (n === 0 ? '\\./' : '(\\.\\./)'.concat(`{${n}}`));

/**
 * The gateway's contract, relative to core/roles/: the one part of a wing every other part may import
 * (the runtime's gateway link, the other wings, the consoles' types), since it is how they reach the
 * gateway (docs/architecture.md, "The gateway's contract").
 */
const OPEN_CONTRACT = 'gateway/contract/';

/** The wings: one folder per role under core/roles/. */
const WINGS = readdirSync(new URL('./core/roles/', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

/**
 * The composition roots: the only files outside test/ that wire plugins and drivers together, one per
 * role in its wing (its plugin list), and the drivers' registry and simulators.
 */
const COMPOSITION_ROOTS = [...WINGS.map((w) => `core/roles/${w}/compose.ts`), 'drivers/registry.ts', 'drivers/sim-main.ts', 'drivers/simulators.ts'];

/** `files` glob for the TypeScript files exactly `depth` directories below `area`. */
const atDepth = (area, depth) => [`${area}/${'*/'.repeat(depth - 1)}*.{ts,tsx}`];

const NO_PLUGINS_OR_DRIVERS = (d, who) => ({ regex: `^${up(d)}(plugins|drivers)(/|$)`, message: `${who} must not import plugins/ or drivers/: only the composition roots wire them (core/roles/<role>/compose.ts, see eslint.config.js).` });
const restrict = (files, patterns, ignores = []) => ({ files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } });

const importRules = [];
for (let d = 1; d <= MAX_DEPTH; d++) {
  // plugins/<x>/…: `../` × (d - 1) lands in plugins/, so any import that goes exactly that far up reaches another plugin.
  if (d >= 2) {
    importRules.push(restrict(atDepth('plugins', d), [
      { regex: `^${up(d - 1)}(?!\\.\\./)`, message: 'A plugin must not import another plugin: lift shared code into core/ or meet through the interface registry and the event bus.' },
      NO_PLUGINS_OR_DRIVERS(d, 'A plugin'),
      { regex: `^${up(d)}core/roles/[^/]+/(compose|definition)\\.js$`, message: 'A plugin must not import a role\'s composition or definition: the role lists the plugin, not the other way round.' },
    ]));
  }
  // The runtime: core/ outside core/roles/ (and core/main.ts, below). `../` × (d - 1) lands in core/.
  importRules.push(restrict(atDepth('core', d), [
    NO_PLUGINS_OR_DRIVERS(d, 'core/'),
    { regex: `^${up(d - 1)}roles/(?!${OPEN_CONTRACT})`, message: 'The runtime (core/ outside core/roles/) must not import a role\'s wing: a role passes what it needs in (contexts, services, definitions). Only the gateway\'s contract (core/roles/gateway/contract/) is open to all.' },
  ], ['core/main.ts', 'core/roles/**']));
  importRules.push(restrict(atDepth('drivers', d), [
    { regex: `^${up(d)}plugins(/|$)`, message: 'A driver must not import plugins/: only the composition roots wire them.' },
    { regex: `^${up(d)}core/roles/`, message: 'A driver must not import a role\'s wing: the driver seam is core/driver-seam/driver.ts.' },
  ], COMPOSITION_ROOTS));
  // A wing: core/roles/<w>/ at depth d ≥ 3 below the top; `../` × (d - 2) lands in core/roles/.
  if (d >= 3) {
    for (const wing of WINGS) {
      const files = [`core/roles/${wing}/${'*/'.repeat(d - 3)}*.{ts,tsx}`];
      const wingRules = [
        { regex: `^${up(d - 2)}(?!${wing}/|${OPEN_CONTRACT})[^./][^/]*/`, message: `The ${wing} wing must not import another role's wing: lift what both need into the runtime (core/). Only the gateway's contract (core/roles/gateway/contract/) is open to all.` },
        { regex: `^${up(d - 2)}index\\.js$`, message: 'A wing must not import the role list (core/roles/index.ts): only core/main.ts does.' },
      ];
      const compose = `core/roles/${wing}/compose.ts`;
      importRules.push(restrict(files, [...wingRules, NO_PLUGINS_OR_DRIVERS(d, `A wing outside its compose.ts (core/roles/${wing}/compose.ts)`)], [compose]));
      if (d === 3) importRules.push(restrict([compose], wingRules));
    }
  }
}
// core/main.ts reaches the roles through their list only.
importRules.push(restrict(['core/main.ts'], [
  NO_PLUGINS_OR_DRIVERS(1, 'core/main.ts'),
  { regex: '^\\./roles/(?!index\\.js$)', message: 'core/main.ts reaches the roles through their list (core/roles/index.ts) only.' },
]));
// config/: the runtime's keys of the configuration file, read by core/ itself, so under the runtime's rules.
importRules.push(restrict(['config/*.{ts,tsx}'], [
  NO_PLUGINS_OR_DRIVERS(1, 'config/'),
  { regex: `^${up(1)}core/roles/`, message: 'config/ must not import a role\'s wing: it declares the runtime\'s keys, and each wing declares its own part (core/config/config-parts.ts).' },
]));
// The role list imports each wing's definition, and nothing of plugins/ or drivers/.
importRules.push(restrict(['core/roles/index.ts'], [NO_PLUGINS_OR_DRIVERS(2, 'The role list')]));

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
  // A function a person can read at once; a longer one is a table and says so (`// eslint-disable-next-line max-lines-per-function -- <why>`).
  {
    files: ['**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', 'test/**'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  ...importRules,
);
