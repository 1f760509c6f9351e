/**
 * The modules oas offers MISP as a misp-modules server (issue 39), and their listing as
 * misp-modules' `GET /modules` answers it: one object per module, `name`, `type` (the folder a
 * misp-modules module lives in: `expansion`), `mispattributes` (what its `introspection()` gives:
 * `input`, `output`, and `format` `misp_standard` for the modules of the new format) and `meta`
 * (its `version()`: `moduleinfo` with `config`).
 *
 * - `oas`: the default engines, with the verdict; `misp_standard`: MISP objects back.
 * - `oas_set_<name>`: the engines of a set of `engine_sets`; `misp_standard` too.
 * - `oas_<engine id>`: one engine; the simple form (`{"results": [{"types", "values"}]}`). Only
 *   the engines that can run here: one lacking its credentials is offered once configured.
 *
 * MISP reads `mispattributes.format` to choose how to ask (the attribute whole, or `{<type>:
 * value}`) and `meta.module-type` to offer a module for hover and expansion; `meta.config` is
 * empty: oas's own configuration holds the keys, MISP sends none. A name is made of letters,
 * digits and `_` only (MISP's setting `Plugin.Enrichment_<name>_enabled` reads a `.` as a path).
 */
import type { Catalog } from '../engine/catalog.js';
import type { EngineDefinition } from '../engine/contract.js';
import type { Config } from '../config/schema.js';
import type { ObservableType } from '../observables/types.js';
import { mispTypesFor } from './misp-types.js';

export type ModuleFormat = 'simplified' | 'misp_standard';

export interface MispModule {
  name: string;
  /** What the analysis request selects: undefined for the default engines, `@<set>`, an engine id. */
  engines: string[] | undefined;
  format: ModuleFormat;
  /** The MISP attribute types it takes. */
  input: string[];
  /** Whether one of its engines takes an observable of this type (directly, or on its resolved IP). */
  accepts(type: ObservableType): boolean;
  /** meta.name and meta.description. */
  label: string;
  description: string;
}

/** What the answers of misp_standard modules hold, as MISP attribute types. */
const STANDARD_OUTPUT = ['text', 'link', 'domain', 'hostname', 'ip-dst', 'AS', 'whois-registrar', 'whois-registrant-name', 'whois-registrant-org', 'whois-registrant-email', 'datetime'];

/** An engine takes the type itself, or (an IP-only engine) on the address a domain or URL resolves to. */
export function engineAccepts(engine: EngineDefinition, type: ObservableType): boolean {
  return engine.types.includes(type) || (engine.reversedIp && (type === 'FQDN' || type === 'URL'));
}

/** A module name MISP can keep a setting for: `oas_set_team.triage` is `oas_set_team_triage`. */
export function moduleName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

const cache = new WeakMap<Catalog, { config: Config; modules: MispModule[] }>();

/** The modules of this catalog and configuration (kept while they are the app's: a reload replaces both). */
export function mispModules(catalog: Catalog, config: Config): MispModule[] {
  const known = cache.get(catalog);
  if (known?.config === config) return known.modules;
  const modules = buildModules(catalog, config);
  cache.set(catalog, { config, modules });
  return modules;
}

function buildModules(catalog: Catalog, config: Config): MispModule[] {
  const modules: MispModule[] = [];
  const names = new Set<string>();
  const add = (module: MispModule) => {
    // Two names that differ only by a `.` or `-` are one name for MISP: the first keeps it.
    if (module.input.length === 0 || names.has(module.name)) return;
    names.add(module.name);
    modules.push(module);
  };
  const group = (engines: readonly EngineDefinition[]) => (type: ObservableType) => engines.some((engine) => engineAccepts(engine, type));
  const labels = (engines: readonly EngineDefinition[]) => engines.map((engine) => engine.label).join(', ');

  const defaults = catalog.defaults();
  const verdict = group(defaults);
  add({
    name: 'oas',
    engines: undefined,
    format: 'misp_standard',
    input: mispTypesFor(verdict),
    accepts: verdict,
    label: 'oas',
    description: `oas: the default engines (${labels(defaults)}) with the verdict, as MISP objects (the verdict and the engines' summaries, resolved addresses, ASN, registration).`,
  });
  for (const [set, members] of [...catalog.sets].sort(([a], [b]) => a.localeCompare(b))) {
    const engines = members.map((member) => catalog.find(member)).filter((engine): engine is EngineDefinition => engine !== undefined);
    const accepts = group(engines);
    add({
      name: moduleName(`oas_set_${set}`),
      engines: [`@${set}`],
      format: 'misp_standard',
      input: mispTypesFor(accepts),
      accepts,
      label: `oas set ${set}`,
      description: `oas engine set ${set} (${labels(engines)}) with the verdict, as MISP objects (the verdict and the engines' summaries, resolved addresses, ASN, registration).`,
    });
  }
  for (const engine of catalog.engines) {
    if (!catalog.isConfigured(engine, config.engines)) continue;
    const accepts = (type: ObservableType) => engineAccepts(engine, type);
    add({
      name: moduleName(`oas_${engine.id}`),
      engines: [engine.id],
      format: 'simplified',
      input: mispTypesFor(accepts),
      accepts,
      label: `oas ${engine.label}`,
      description: `oas · ${engine.label}${engine.service !== engine.id ? ` (${engine.service})` : ''}: ${engine.description}. Answers oas's verdict with its reasons and the engine's one-line summary.`,
    });
  }
  return modules;
}

/** misp-modules' `GET /modules`: each module as its `introspection()` and `version()` give it. */
export function moduleListing(modules: readonly MispModule[], version: string): Record<string, unknown>[] {
  return modules.map((module) => ({
    name: module.name,
    type: 'expansion',
    mispattributes: module.format === 'misp_standard'
      ? { input: module.input, output: STANDARD_OUTPUT, format: 'misp_standard' }
      : { input: module.input, output: ['text'] },
    meta: {
      version,
      author: 'oas',
      description: module.description,
      'module-type': ['expansion', 'hover'],
      name: module.label,
      logo: '',
      requirements: [],
      features: module.format === 'misp_standard'
        ? 'Takes a MISP attribute whole and answers MISP objects: a report with the verdict, its reasons and each engine\'s one-line summary, the addresses a domain resolves to, the ASN, the registration record.'
        : 'Takes one attribute value and answers text: the verdict with its reasons, and the engine\'s one-line summary.',
      references: [],
      input: module.input.join(', '),
      output: module.format === 'misp_standard' ? 'MISP objects (report, domain-ip, asn, whois) and the attribute tagged with the verdict.' : 'Text.',
      config: [],
    },
  }));
}

/** The module of that name; undefined when this server offers none. */
export function findModule(modules: readonly MispModule[], name: string): MispModule | undefined {
  return modules.find((module) => module.name === name);
}
