/**
 * The engine catalog: every module in `engines/` whose default export is an engine definition.
 * Adding an engine means adding a file there; nothing else names engines.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { CatalogListing, CatalogVariant, EngineDefinition } from './contract.js';
import { missingCredentials, resolveSettings } from './context.js';
import { closest } from '../lookup/did-you-mean.js';

/** The compiled `engines/` directory, next to `src/`. */
export const ENGINES_DIR = fileURLToPath(new URL('../../engines/', import.meta.url));

/**
 * `unknown engine: urlscn; did you mean urlscan? (valid engines: abusix (provider_01), ...)`: the
 * closest accepted name to each unknown one, then every engine by service name with its id.
 */
export class UnknownEngineError extends Error {
  override name = 'UnknownEngineError';
  /** The closest accepted name of each unknown name that has one close enough. */
  readonly suggestions: Record<string, string>;
  constructor(readonly unknown: string[], readonly valid: string[], engines: readonly Pick<EngineDefinition, 'id' | 'service'>[] = []) {
    const names = [...new Set([...valid, ...engines.flatMap((e) => [e.id, e.service])])];
    const suggestions: Record<string, string> = {};
    for (const name of unknown) {
      const suggestion = closest(name, names);
      if (suggestion !== undefined) suggestions[name] = suggestion;
    }
    const suggested = Object.entries(suggestions);
    const hint = suggested.length === 0 ? ''
      : unknown.length === 1 ? `; did you mean ${suggested[0]![1]}?`
        : `; did you mean ${suggested.map(([name, suggestion]) => `${suggestion} (for ${name})`).join(', ')}?`;
    const listed = engines.length > 0
      ? [...engines].sort((a, b) => compareIds(a.service, b.service)).map((e) => (e.service === e.id ? e.id : `${e.service} (${e.id})`))
      : valid;
    super(`unknown engine${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}${hint} (valid engines: ${listed.join(', ')})`);
    this.suggestions = suggestions;
  }
}

/** `unknown engine set: @phishng; did you mean @phishing? (engine sets: @phishing, @triage)`. */
export class UnknownEngineSetError extends Error {
  override name = 'UnknownEngineSetError';
  constructor(readonly unknown: string[], sets: readonly string[]) {
    const suggestion = unknown.length === 1 ? closest(unknown[0]!, sets) : undefined;
    const known = sets.length > 0 ? `engine sets: ${sets.map((s) => `@${s}`).join(', ')}` : 'no engine set is configured: setting engine_sets';
    super(`unknown engine set${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => `@${u}`).join(', ')}${suggestion ? `; did you mean @${suggestion}?` : ''} (${known})`);
  }
}

/** A set of `engine_sets` names an engine the catalog lacks (a configuration error). */
export class EngineSetMemberError extends Error {
  override name = 'EngineSetMemberError';
  constructor(readonly set: string, readonly member: string, suggestion: string | undefined) {
    super(`invalid "engine_sets.${set}": unknown engine ${member}${suggestion ? `; did you mean ${suggestion}?` : ''}`);
  }
}

export class Catalog {
  /** The variant's engines, resolved with its overrides, then the extras it offers, by id. */
  readonly engines: readonly EngineDefinition[];
  /** Named engine sets (setting `engine_sets`): each a list of engine ids or aliases. */
  readonly sets: ReadonlyMap<string, readonly string[]>;
  private readonly byName = new Map<string, EngineDefinition>();
  private readonly members = new Set<EngineDefinition>();

  /**
   * The catalog of one variant, from every engine definition. An engine of the variant gets the
   * variant's overrides; the main catalog also offers, as extras that are never default, the
   * engines that belong only to another variant (the legacy `rdap`). The older catalog is the
   * spec's list, plus the engines beyond the spec (of no variant), which every variant offers as
   * extras: any name a release of the reference accepted runs, whichever variant is chosen.
   */
  constructor(definitions: readonly EngineDefinition[], readonly variant: CatalogVariant = 'main', sets: Readonly<Record<string, readonly string[]>> = {}) {
    const engines: EngineDefinition[] = [];
    for (const definition of definitions) {
      if (definition.custom) {
        engines.push(definition);
      } else if (definition.catalogs.includes(variant)) {
        const engine = resolveVariant(definition, variant);
        this.members.add(engine);
        engines.push(engine);
      } else if (variant === 'main' || definition.catalogs.length === 0) {
        engines.push(definition);
      }
    }
    this.engines = engines.sort((a, b) => compareIds(a.id, b.id));
    for (const engine of this.engines) {
      for (const name of [engine.id, engine.service]) {
        const other = this.byName.get(name);
        if (other && other !== engine) throw new Error(`engine name "${name}" is used by ${other.id} and ${engine.id}`);
        this.byName.set(name, engine);
      }
    }
    for (const [name, members] of Object.entries(sets)) {
      for (const member of members) {
        if (!this.find(member)) throw new EngineSetMemberError(name, member, closest(member, this.names()));
      }
    }
    this.sets = new Map(Object.entries(sets));
  }

  /** Whether the engine is one of the variant's own (not an extra from another variant). */
  isMember(engine: EngineDefinition): boolean {
    return this.members.has(engine);
  }

  /**
   * Where an engine is listed: this catalog's variant, the one an extra comes from, or `beyond`
   * the spec for an engine of no variant.
   */
  variantOf(engine: EngineDefinition): CatalogListing {
    if (engine.custom) return 'custom';
    return this.isMember(engine) ? this.variant : (engine.catalogs[0] ?? 'beyond');
  }

  /** Preselected: one of the variant's own engines tagged `default`. */
  isDefault(engine: EngineDefinition): boolean {
    return this.isMember(engine) && engine.tags.includes('default');
  }

  /** By id or service alias, case-insensitively. */
  find(name: string): EngineDefinition | undefined {
    return this.byName.get(name) ?? this.byName.get(name.trim().toLowerCase());
  }

  /** The variant's engines tagged `default`. */
  defaults(): EngineDefinition[] {
    return this.engines.filter((e) => this.isDefault(e));
  }

  /** Every accepted name: ids and aliases. */
  names(): string[] {
    return [...new Set(this.engines.flatMap((e) => [e.id, e.service]))].sort();
  }

  /** The engine names a list selects: each `@name` replaced by the members of that set. */
  expandSets(names: readonly string[]): string[] {
    const unknown = names.map((n) => n.trim()).filter((n) => n.startsWith('@') && !this.setOf(n)).map((n) => n.slice(1));
    if (unknown.length > 0) throw new UnknownEngineSetError(unknown, [...this.sets.keys()]);
    return this.expandKnownSets(names);
  }

  /**
   * The same, leaving a `@name` this catalog has no set of as it is (for a server that may have
   * it: `--server`), without duplicates.
   */
  expandKnownSets(names: readonly string[]): string[] {
    return [...new Set(names.flatMap((raw) => {
      const name = raw.trim();
      return name.startsWith('@') ? this.setOf(name) ?? [name] : [name];
    }))];
  }

  private setOf(name: string): readonly string[] | undefined {
    return this.sets.get(name.slice(1)) ?? this.sets.get(name.slice(1).toLowerCase());
  }

  /**
   * Resolves the caller's names, keeping each name as its result key; `@name` stands for the
   * engines of that set (keyed by the names the set gives them). Duplicates are dropped; any
   * unknown name is an error listing the valid ones.
   */
  select(names: readonly string[]): { key: string; engine: EngineDefinition }[] {
    const keys = [...new Set(this.expandSets(names).map((n) => n.trim()).filter(Boolean))];
    const unknown = keys.filter((k) => !this.find(k));
    if (unknown.length > 0) throw new UnknownEngineError(unknown, this.engines.map((e) => e.id), this.engines);
    return keys.map((key) => ({ key, engine: this.find(key)! }));
  }

  /** Whether every required credential of the engine is configured. */
  isConfigured(engine: EngineDefinition, engineSettings: Readonly<Record<string, Record<string, unknown>>>): boolean {
    return missingCredentials(engine, resolveSettings(engine, engineSettings[engine.id])).length === 0;
  }
}

/** Every engine definition in `engines/`, whatever its variant. */
export async function loadEngineDefinitions(dir: string = ENGINES_DIR): Promise<EngineDefinition[]> {
  return (await loadEngineModules(dir)).map((m) => m.definition);
}

/** The engine modules of `engines/` (file name and definition), in file order. */
export async function loadEngineModules(dir: string = ENGINES_DIR): Promise<{ file: string; definition: EngineDefinition }[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.js')).sort();
  // Imported all at once (start-up cost: one after the other, each waits for the file system);
  // the order stays the files' order.
  const modules = await Promise.all(files.map(async (file) => ({ file, definition: await importEngine(file, dir) })));
  return modules.filter((m): m is { file: string; definition: EngineDefinition } => m.definition !== undefined);
}

/** The definition a file of `engines/` exports, if it exports one. */
export async function importEngine(file: string, dir: string = ENGINES_DIR): Promise<EngineDefinition | undefined> {
  const module = (await import(pathToFileURL(join(dir, file)).href)) as { default?: unknown };
  return isEngine(module.default) ? module.default : undefined;
}

export async function loadCatalog(variant: CatalogVariant = 'main', dir: string = ENGINES_DIR): Promise<Catalog> {
  return new Catalog(await loadEngineDefinitions(dir), variant);
}

const ID = /^[a-z0-9_]+$/;
let collator: Intl.Collator | undefined;

/**
 * The order of `localeCompare(b, 'en', { numeric: true })`. Start-up cost: ICU's collator takes
 * ~6 ms to set up, so ids made of [a-z0-9_] (all of them) are compared here with the same rules
 * ('_' before digits before letters, digit runs by value); any other id goes to the collator.
 */
export function compareIds(a: string, b: string): number {
  if (!ID.test(a) || !ID.test(b)) return (collator ??= new Intl.Collator('en', { numeric: true })).compare(a, b);
  const isDigit = (c: number) => c >= 48 && c <= 57;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      let ej = j;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      const na = a.slice(i, ei).replace(/^0+/, '');
      const nb = b.slice(j, ej).replace(/^0+/, '');
      if (na.length !== nb.length) return na.length - nb.length;
      if (na !== nb) return na < nb ? -1 : 1;
      i = ei;
      j = ej;
      continue;
    }
    const rank = (c: number) => (c === 95 ? 0 : isDigit(c) ? 1 : 2);
    if (rank(ca) !== rank(cb)) return rank(ca) - rank(cb);
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  return (a.length - i) - (b.length - j);
}

/** The definition as the variant declares it; a definition with overrides caches apart. */
function resolveVariant(definition: EngineDefinition, variant: CatalogVariant): EngineDefinition {
  const overrides = definition.variants?.[variant];
  return overrides ? { ...definition, ...overrides, cacheScope: variant } : definition;
}

function isEngine(value: unknown): value is EngineDefinition {
  const e = value as Partial<EngineDefinition> | undefined;
  return typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.run === 'function' && Array.isArray(e.types);
}
