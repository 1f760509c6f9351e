/**
 * The layers of oas, written down and enforced (docs/ARCHITECTURE.md, issue 22). From the bottom:
 *
 *   observables → engine contract → clients → engines → runner → analysis → surfaces
 *
 * A module imports only from its own layer or below, type-only imports included, and no import
 * cycle is allowed anywhere. `npm test` runs these rules (tests/architecture.test.ts) over src/,
 * engines/ and web/src/; a violation fails it naming both files and the rule.
 */
'use strict';

/** Each layer: its name and the paths (from the repository's root) of its modules. */
const LAYERS = [
  { name: 'observables', path: '^src/(observables|marking|files)/' },
  { name: 'contract', path: '^src/engine/contract[.]ts$' },
  {
    name: 'clients',
    path: '^src/(http|dns|whois|rdap|badasn|scrape|lookup|text|fs|config)/|^src/engine/(context|credentials)[.]ts$',
  },
  { name: 'engines', path: '^engines/|^src/custom/|^src/engine/(catalog|declarations)[.]ts$' },
  { name: 'runner', path: '^src/runner/' },
  { name: 'analysis', path: '^src/(analysis|store|verdict|view|export)/' },
  { name: 'surfaces', path: '^src/(cli|server|scale|mcp|automation|push|enrichment|doctor)/|^src/app[.]ts$|^web/src/' },
];

/** One rule per layer: nothing in it imports from a layer above it. */
const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `The ${layer.name} layer imports only from its own layer or below (${LAYERS.slice(0, i + 1)
    .map((l) => l.name)
    .join(', ')}).`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(i + 1).map((l) => `(${l.path})`).join('|') },
}));

module.exports = {

  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type-only imports included: shared types live in the lowest module that needs them.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'contract-types-only',
      comment: 'The engine contract uses nothing but types from other modules: it is the floor everything stands on.',
      severity: 'error',
      from: { path: '^src/engine/contract[.]ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-below-service',
      comment: 'The stores keep what the analysis service gives them: they never import it, nor the views or exports (only the types of the JSON the pages read).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(analysis|view|export)/', pathNot: '^src/view/types[.]d[.]ts$' },
    },
    {
      name: 'scale-not-server',
      comment: 'The queue and worker (src/scale/) run without the HTTP server: they never import src/server/.',
      severity: 'error',
      from: { path: '^src/scale/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'web-takes-types-only',
      comment: 'The browser code takes nothing from the server code but the types of the JSON it reads.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { path: '^src/', pathNot: '^src/view/types[.]d[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js'],
    },
  },
};
