/**
 * No import cycles (docs/architecture.md, "House rules"), run by `npm run lint`
 * after ESLint. A cycle, type-only imports included, is an error: two files
 * that need each other are one concept split in the wrong place, and a value
 * cycle makes start-up order depend on which file is imported first.
 * ESLint's import plugins skip type-only imports when they look for cycles,
 * so this one check runs on dependency-cruiser, which reads them with the
 * TypeScript compiler (`tsPreCompilationDeps`).
 */
export default {
  forbidden: [
    {
      name: 'no-import-cycle',
      severity: 'error',
      comment: 'Files that import each other, directly or through others: move what both need into one of them, or into a file both import.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|data|\\.tmp|plugins/console/dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
