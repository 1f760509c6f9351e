/**
 * The layers of docs/ARCHITECTURE.md, enforced: dependency-cruiser reads src/, engines/ and
 * web/src/ (TypeScript sources, type-only imports included) with the rules of
 * .dependency-cruiser.cjs. An upward import or an import cycle fails here, each named
 * `from → to (rule)`.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

/** The cruise, once for every test of this file. */
const result = (async () => {
  const config = require(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: unknown[]; options: Record<string, unknown> };
  const cwd = process.cwd();
  process.chdir(ROOT); // paths in the rules and the results are relative to the repository
  try {
    const tsConfig = extractTSConfig(join(ROOT, 'tsconfig.json'));
    const reported = await cruise(
      ['src', 'engines', 'web/src'],
      { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden }, tsPreCompilationDeps: true } as never,
      undefined,
      { tsConfig },
    );
    return reported.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
})();

/** `from → to (rule)`; a cycle as its whole ring. */
function describe(violation: IViolation): string {
  const cycle = violation.cycle?.map((step) => (typeof step === 'string' ? step : step.name));
  const to = cycle && cycle.length > 0 ? cycle.join(' → ') : violation.to;
  return `${violation.from} → ${to} (${violation.rule.name})`;
}

/** The layer of each rule `layer-<name>`, and the last one (surfaces), by path. */
const LAYERS: { name: string; path: RegExp }[] = [
  { name: 'observables', path: /^src\/(observables|marking|files)\// },
  { name: 'contract', path: /^src\/engine\/contract[.]ts$/ },
  { name: 'clients', path: /^src\/(http|dns|whois|rdap|badasn|scrape|lookup|text|fs|config)\/|^src\/engine\/(context|credentials)[.]ts$/ },
  { name: 'engines', path: /^engines\/|^src\/custom\/|^src\/engine\/(catalog|declarations)[.]ts$/ },
  { name: 'runner', path: /^src\/runner\// },
  { name: 'analysis', path: /^src\/(analysis|store|verdict|view|export)\// },
  { name: 'surfaces', path: /^src\/(cli|server|scale|mcp|automation|push|enrichment|doctor)\/|^src\/app[.]ts$|^web\/src\// },
];

test('no upward import and no import cycle (dependency-cruiser, .dependency-cruiser.cjs)', async () => {
  const output = await result;
  assert.ok(output.summary.totalCruised > 100, `only ${output.summary.totalCruised} modules cruised`);
  const violations = output.summary.violations.map(describe);
  assert.deepEqual(violations, [], `${violations.length} violation(s):\n${violations.join('\n')}`);
});

test('the rules of .dependency-cruiser.cjs name the same layers as this test and docs/ARCHITECTURE.md', () => {
  const config = require(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path?: string } }[] };
  const rules = config.forbidden.filter((r) => r.name.startsWith('layer-'));
  assert.deepEqual(rules.map((r) => r.name), LAYERS.slice(0, -1).map((l) => `layer-${l.name}`));
  for (const [i, rule] of rules.entries()) assert.equal(rule.from.path, LAYERS[i]!.path.source.replaceAll('\\/', '/'));
});

test('every module of src/, engines/ and web/src/ is in exactly one layer; cycles are detected', async () => {
  const output = await result;
  const ours = output.modules.filter((m) => /^(src|engines|web\/src)\//.test(m.source));
  const counts: Record<string, number> = Object.fromEntries(LAYERS.map((l) => [l.name, 0]));
  for (const module of ours) {
    const layers = LAYERS.filter((l) => l.path.test(module.source));
    assert.equal(layers.length, 1, `${module.source} is in ${layers.length} layers`);
    counts[layers[0]!.name]! += 1;
  }
  for (const [name, count] of Object.entries(counts)) assert.ok(count > 0, `no module in the ${name} layer`);
  console.log(`modules per layer: ${Object.entries(counts).map(([n, c]) => `${n} ${c}`).join(', ')}; violations ${output.summary.violations.length}`);
  // The cruise saw the type-only imports (the contract has nothing else) and looked for cycles.
  const contract = ours.find((m) => m.source === 'src/engine/contract.ts');
  assert.ok(contract?.dependencies.some((d) => d.dependencyTypes.includes('type-only')), 'type-only imports not seen');
  assert.ok(ours.every((m) => m.dependencies.every((d) => typeof d.circular === 'boolean')), 'cycles not looked for');
});
