/**
 * `oas engines`: the catalog and which engines are configured. Never prints a credential. A custom
 * engine's texts (from the configuration) are written inert: the tables through src/cli/table.ts,
 * JSON with jsonInert (src/text/inert.ts).
 */
import { loadListingSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import { resolveSettings } from '../engine/context.js';
import type { EngineDefinition } from '../engine/contract.js';
import { ceilingsOf, type Disclosure, type Pap, type Tlp } from '../marking/levels.js';
import { OBSERVABLE_TYPES } from '../observables/types.js';
import { inertLine, jsonInert } from '../text/inert.js';
import { EXIT_OK } from './errors.js';

export interface EnginesOptions {
  json?: boolean;
  config?: string;
  catalog?: string;
  /** Every column (tags, every credential), however wide. */
  wide?: boolean;
  /** The engine sets (setting engine_sets) instead of the engines. */
  sets?: boolean;
}

export async function enginesCommand(options: EnginesOptions): Promise<number> {
  const flags: Partial<Config> = options.catalog === undefined ? {} : { catalog: options.catalog as Config['catalog'] };
  const { config, catalog } = await loadListingSettings({ file: options.config, flags });
  if (options.sets) return listSets(catalog, options);
  const describe = (e: EngineDefinition) => ({
    id: e.id,
    service: e.service,
    label: e.label,
    description: e.description,
    catalog: catalog.variantOf(e),
    default: catalog.isDefault(e),
    tags: e.tags,
    types: e.types,
    reversed_ip: e.reversedIp,
    depends_on: e.dependsOn,
    custom: e.custom === true,
    credentials: e.credentials.map((c) => ({ setting: c.setting, label: c.label, required: c.required !== false })),
    configured: catalog.isConfigured(e, config.engines),
    timeout_ms: e.defaults.timeout_ms,
    ...markingOf(e, config.engines[e.id]),
  });
  const engines = catalog.engines.map(describe);
  if (options.json) {
    process.stdout.write(`${jsonInert(JSON.stringify(engines, null, 2))}\n`);
    return EXIT_OK;
  }
  const { displayWidth, outputWidth, renderColumns, renderGrid, wrapWords } = await import('./table.js'); // not loaded for --json
  const width = outputWidth(process.stdout.isTTY ? process.stdout.columns : undefined);
  const out: string[] = [];
  if (options.wide) {
    // Every column, as wide as it takes.
    const rows = engines.map((e) => [
      e.id + (e.catalog === 'custom' ? ' (custom)' : e.catalog === 'beyond' ? ' (beyond the spec)' : e.catalog !== catalog.variant ? ` (${e.catalog} catalog)` : ''),
      e.service,
      e.tags.join(', '),
      e.types.join(', ') + (e.reversed_ip ? ' (+ reversed IP)' : ''),
      e.credentials.length ? e.credentials.map((c) => c.label + (c.required ? '' : ' (optional)')).join(', ') : 'none',
      e.configured ? 'yes' : 'no',
      e.disclosure,
      e.touches_target ? 'yes' : 'no',
      e.max_tlp,
      e.max_pap,
    ]);
    out.push(renderGrid(['Engine', 'Service', 'Tags', 'Types', 'Credentials', 'Configured', 'Disclosure', 'Touches target', 'Max TLP', 'Max PAP'], rows));
  } else {
    // Fits the width: id (marked), service, types in short, and whether it is configured (else
    // what it needs); the service column goes first when the width is short. Where each engine
    // sends an observable and its ceilings follow the table, a few lines at any width.
    const marks = { default: '*', beyond: '+', other: '^', custom: '~' };
    const used = new Set<string>();
    const rows = engines.map((e) => {
      const mark = [e.default ? marks.default : '', e.catalog === 'custom' ? marks.custom : e.catalog === 'beyond' ? marks.beyond : e.catalog !== catalog.variant ? marks.other : ''].join('');
      for (const m of mark) used.add(m);
      const required = e.credentials.filter((c) => c.required).map((c) => c.label);
      return [
        mark ? `${e.id} ${mark}` : e.id,
        e.service === e.id ? '' : e.service,
        shortTypes(e.types) + (e.reversed_ip ? ' (+ reversed IP)' : ''),
        e.configured ? 'yes' : required.length ? `no: ${required.join(', ')}` : 'no',
      ];
    });
    const columns = [
      { head: 'Engine' },
      { head: 'Service', optional: true },
      { head: 'Types', flexible: true, min: 12 },
      { head: 'Configured', flexible: true, min: 12 },
    ];
    // Too narrow for the columns even without the service: one block per engine instead.
    const table = renderColumns(columns, rows, width);
    if (table.split('\n').every((line) => displayWidth(line) <= width)) out.push(table);
    else {
      for (const [engine, service, types, configured] of rows.map((row) => row.map(inertLine))) {
        out.push(...wrapWords(service ? `${engine} (${service})` : engine!, width, '', '  '));
        out.push(...wrapWords(types!, width, '  ', '  '), ...wrapWords(`configured: ${configured}`, width, '  ', '    '));
      }
    }
    const legend = [
      used.has(marks.default) ? `${marks.default} default` : '',
      used.has(marks.beyond) ? `${marks.beyond} beyond the spec` : '',
      used.has(marks.other) ? `${marks.other} from the ${catalog.variant === 'main' ? 'older' : 'main'} catalog` : '',
      used.has(marks.custom) ? `${marks.custom} custom (setting custom_engines)` : '',
    ].filter(Boolean);
    out.push(...wrapWords(`${legend.join(', ')}${legend.length ? '; ' : ''}oas engines --wide: tags and every credential`, width, '', ''));
    for (const line of markingLines(engines)) out.push(...wrapWords(inertLine(line), width, '', '  '));
  }
  const members = catalog.engines.filter((e) => catalog.isMember(e)).length;
  out.push(...wrapWords(`${members} engines in the ${catalog.variant} catalog (setting catalog, --catalog main|older)`, options.wide ? Infinity : width, '', ''));
  process.stdout.on('error', () => {}); // `oas engines | head`: the rest has nowhere to go
  process.stdout.write(`${out.join('\n')}\n`);
  return EXIT_OK;
}

/**
 * Below the table (issue 34): where the engines send an observable (the fewer that keep it in-house
 * by name, the third parties as the rest), which reach what the observable names, and the engines
 * by ceilings (the most common pair as the rest).
 */
function markingLines(engines: readonly { id: string; disclosure: Disclosure; touches_target: boolean; max_tlp: Tlp; max_pap: Pap }[]): string[] {
  const ids = (disclosure: Disclosure) => engines.filter((e) => e.disclosure === disclosure).map((e) => e.id);
  const where = [
    ids('none').length ? `nowhere (nothing leaves oas): ${ids('none').join(', ')}` : '',
    ids('internal').length ? `in-house (a server the team runs): ${ids('internal').join(', ')}` : '',
    ids('third_party').length ? `${ids('third_party').length === engines.length ? 'every engine' : 'every other engine'}: a third party` : '',
  ].filter(Boolean);
  const touching = engines.filter((e) => e.touches_target).map((e) => e.id);
  const byCeilings = new Map<string, string[]>();
  for (const e of engines) byCeilings.set(`${e.max_tlp}/${e.max_pap}`, [...(byCeilings.get(`${e.max_tlp}/${e.max_pap}`) ?? []), e.id]);
  const groups = [...byCeilings].sort((a, b) => b[1].length - a[1].length);
  const ceilings = groups.map(([pair, members], i) => (i === 0 && groups.length > 1 ? `${pair}: the others` : `${pair}: ${members.join(', ')}`));
  return [
    `Where observables go: ${where.join('; ')}.`,
    touching.length ? `Reaching what the observable names (a domain resolved, an address's reverse DNS): ${touching.join(', ')}.` : '',
    `Max TLP/PAP an analysis may have for an engine to be sent it (engines.<id>.max_tlp, max_pap): ${[...ceilings.slice(1), ceilings[0]].join('; ')}.`,
  ].filter(Boolean);
}

/**
 * Where an engine sends an observable, and its TLP/PAP ceilings with its settings (issue 34): the
 * most restrictive marking of an analysis it is sent.
 */
function markingOf(e: EngineDefinition, settings: Readonly<Record<string, unknown>> | undefined): { disclosure: Disclosure; touches_target: boolean; max_tlp: Tlp; max_pap: Pap } {
  const ceilings = ceilingsOf(e, resolveSettings(e, settings));
  return { disclosure: e.disclosure, touches_target: e.touchesTarget, max_tlp: ceilings.maxTlp, max_pap: ceilings.maxPap };
}

/** `oas engines --sets`: each set, its engines as the configuration names them, and their ids. */
async function listSets(catalog: Catalog, options: EnginesOptions): Promise<number> {
  const sets = [...catalog.sets].map(([name, members]) => ({ name, engines: [...members], ids: members.map((m) => catalog.find(m)!.id) }));
  process.stdout.on('error', () => {}); // `oas engines --sets | head`
  if (options.json) {
    process.stdout.write(`${jsonInert(JSON.stringify(sets, null, 2))}\n`);
    return EXIT_OK;
  }
  if (sets.length === 0) {
    process.stdout.write('no engine set is configured (setting engine_sets: { "<name>": ["<engine>", ...] })\n');
    return EXIT_OK;
  }
  const { outputWidth, renderColumns } = await import('./table.js');
  const width = outputWidth(process.stdout.isTTY ? process.stdout.columns : undefined);
  const rows = sets.map((set) => [`@${set.name}`, set.engines.map((e, i) => (e === set.ids[i] ? e : `${e} (${set.ids[i]})`)).join(', ')]);
  const table = renderColumns([{ head: 'Set' }, { head: 'Engines', flexible: true, min: 20 }], rows, width);
  process.stdout.write(`${table}\n${sets.length} engine set(s): oas analyze --set <name>, or "@<name>" in the API's engines\n`);
  return EXIT_OK;
}

/** Types in short: IPv4 and IPv6 as IP, the three hashes as hash, FQDN as domain; every type as "any type". */
function shortTypes(types: readonly string[]): string {
  const has = new Set(types);
  const words: string[] = [];
  const group = (members: string[], word: string) => {
    if (members.every((m) => has.has(m))) {
      words.push(word);
      for (const m of members) has.delete(m);
    }
  };
  if (OBSERVABLE_TYPES.every((t) => has.has(t))) return 'any type';
  group(['IPv4', 'IPv6'], 'IP');
  group(['FQDN'], 'domain');
  group(['MD5', 'SHA1', 'SHA256'], 'hash');
  group(['Email'], 'email');
  group(['CHROME_EXTENSION'], 'extension');
  const rest = types.filter((t) => has.has(t));
  // In the catalog's order: the groups keep the position of their first member.
  const order = (word: string) => types.indexOf({ IP: 'IPv4', domain: 'FQDN', hash: 'MD5', email: 'Email', extension: 'CHROME_EXTENSION' }[word] ?? word);
  return [...words, ...rest].sort((a, b) => order(a) - order(b)).join(', ');
}
