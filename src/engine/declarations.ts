/**
 * Start-up cost of `oas engines`: listing the catalog needs the engines' declarations (ids, tags,
 * types, credentials, defaults, variants) but none of their code, and importing the ~60 modules
 * of `engines/` and what they use costs ~80 ms of CPU on Node 20. The declarations are therefore
 * also kept as JSON in the user's cache directory ($XDG_CACHE_HOME/oas, or ~/.cache/oas), written
 * whenever the modules had to be imported for the listing.
 *
 * The copy is a cache, never a source: it is keyed by the size and modification time of every
 * compiled file of `engines/` and `src/engine/` (a build rewrites them all), so any build or edit
 * of an engine makes it stale, and a stale, unreadable or unwritable copy is simply not used (the
 * modules are imported, as without it).
 * A declaration that does not survive JSON unchanged is never cached. An engine configured with
 * a setting its own settings schema checks is imported for real, so the schema checks it; an
 * analysis imports for real the engines it may run (src/app.ts).
 */
import { readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { ENGINES_DIR, importEngine, loadEngineModules } from './catalog.js';
import type { EngineDefinition } from './contract.js';
import { schemaEntries } from '../config/load.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../fs/private.js';

/**
 * Compiled `src/engine/`: the contract, credentials and catalog the declarations are made with.
 * Start-up cost: statting all of compiled `src/` (~130 files) took 10 ms or more per command on a
 * busy machine; the compiler writes every output file on each build, so any build changes the
 * engines' own files, and this folder covers a change made to it alone.
 */
const ENGINE_SRC_DIR = fileURLToPath(new URL('./', import.meta.url));
const FORMAT = 2;

interface DeclaredEngine {
  file: string;
  /**
   * The settings the engine's own schema (or one of its variants') validates: an engine
   * configured with one of them is imported for real, so that its schema checks them.
   */
  schemaKeys: string[];
  declaration: Record<string, unknown>;
}

interface CacheFile {
  format: number;
  fingerprint: string;
  engines: DeclaredEngine[];
}

/** What stands for the code of an engine listed from its declaration. */
function notLoaded(): never {
  throw new Error('engine code not loaded (declarations only)');
}

/**
 * The engine definitions from the cached declarations, with the code of some imported for real;
 * undefined when there is no fresh copy. `real(definitions)` names them (ids or aliases); the
 * engines named in `configured` that have a settings schema are imported too (their settings are
 * checked by it). The definitions of the others have no code: for listing, configuration and
 * selection only.
 */
export async function declaredDefinitions(
  configured: () => Readonly<Record<string, Record<string, unknown>>>,
  real: (definitions: readonly EngineDefinition[]) => ReadonlySet<string> = () => new Set(),
): Promise<EngineDefinition[] | undefined> {
  const cached = readCache();
  if (!cached) return undefined;
  const definitions = cached.map(({ declaration }) => ({ ...declaration, summary: notLoaded, run: notLoaded }) as unknown as EngineDefinition);
  const settings = configured();
  const wanted = real(definitions);
  const named = (set: ReadonlySet<string>, d: EngineDefinition) => set.has(d.id) || set.has(d.service);
  const checked = (entry: DeclaredEngine, d: EngineDefinition) => [settings[d.id], settings[d.service]]
    .some((values) => values !== undefined && entry.schemaKeys.some((key) => key in values));
  return Promise.all(cached.map(async (entry, i) => {
    const definition = definitions[i]!;
    if (!named(wanted, definition) && !checked(entry, definition)) return definition;
    const loaded = await importEngine(entry.file);
    if (loaded?.id !== definition.id) throw new Error(`engines/${entry.file} changed`);
    return loaded;
  }));
}

/** Every engine of `engines/`, imported for real; their declarations are kept for next time. */
export async function importedDefinitions(): Promise<EngineDefinition[]> {
  const modules = await loadEngineModules();
  saveDeclarations(modules);
  return modules.map((m) => m.definition);
}

/** Keeps the declarations of freshly imported engines for the next listing; silent on failure. */
export function saveDeclarations(modules: readonly { file: string; definition: EngineDefinition }[]): void {
  try {
    const engines = modules.map(({ file, definition }) => ({ file, schemaKeys: schemaKeysOf(definition), declaration: declarationOf(definition) }));
    if (!engines.every((e) => isDeepStrictEqual(JSON.parse(JSON.stringify(e.declaration)), e.declaration))) return;
    const path = cachePath();
    const body: CacheFile = { format: FORMAT, fingerprint: fingerprint(), engines };
    ensurePrivateDir(dirname(path));
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(body), { mode: PRIVATE_FILE_MODE });
    renameSync(temporary, path);
  } catch {
    // A cache: without it the next listing imports the modules again.
  }
}

function readCache(): DeclaredEngine[] | undefined {
  try {
    const cached = JSON.parse(readFileSync(cachePath(), 'utf8')) as CacheFile;
    if (cached.format !== FORMAT || cached.fingerprint !== fingerprint() || !Array.isArray(cached.engines)) return undefined;
    return cached.engines;
  } catch {
    return undefined;
  }
}

/**
 * One cache file per installation (its compiled `engines/` directory), named by a short FNV-1a
 * hash of that path: a name, not a check (the fingerprint inside is compared whole). No
 * node:crypto for it: `oas engines` loads none (issue 33).
 */
function cachePath(): string {
  const cacheHome = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), '.cache');
  return join(cacheHome, 'oas', `engine-declarations-${fnv1a(ENGINES_DIR)}.json`);
}

/** 64-bit FNV-1a of a text, as 16 hex digits. */
function fnv1a(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}

/**
 * Node's version, then the size and modification time of every compiled engine and of the engine
 * contract's modules: compared whole with the cache's.
 */
function fingerprint(): string {
  const lines = [process.version];
  for (const dir of [ENGINES_DIR, ENGINE_SRC_DIR]) {
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith('.js')) continue;
      const stat = statSync(join(dir, name));
      lines.push(`${dir}${name}\0${stat.size}\0${stat.mtimeMs}`);
    }
  }
  return lines.join('\n');
}

function schemaKeysOf(definition: EngineDefinition): string[] {
  const schemas = [definition.settingsSchema, ...Object.values(definition.variants ?? {}).map((o) => o?.settingsSchema)];
  return [...new Set(schemas.flatMap((schema) => Object.keys(schemaEntries(schema))))];
}

/** The definition without its code and schemas: what JSON can hold. */
function declarationOf(definition: EngineDefinition): Record<string, unknown> {
  // `check` (`oas doctor`'s) is code too: a probe, or an observable only doctor, which imports every engine, reads.
  const data = (value: object) => Object.fromEntries(Object.entries(value).filter(([key, v]) => typeof v !== 'function' && key !== 'settingsSchema' && key !== 'variants' && key !== 'check'));
  const declaration = data(definition);
  if (definition.variants !== undefined) {
    declaration.variants = Object.fromEntries(Object.entries(definition.variants).map(([variant, overrides]) => [variant, data(overrides ?? {})]));
  }
  return declaration;
}
