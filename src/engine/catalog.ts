/**
 * The engine catalog: every module in `engines/` whose default export is an engine definition.
 * Adding an engine means adding a file there; nothing else names engines.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { EngineDefinition } from './contract.js';
import { missingCredentials, resolveSettings } from './context.js';

/** The compiled `engines/` directory, next to `src/`. */
const ENGINES_DIR = fileURLToPath(new URL('../../engines/', import.meta.url));

export class UnknownEngineError extends Error {
  override name = 'UnknownEngineError';
  constructor(readonly unknown: string[], readonly valid: string[]) {
    super(`unknown engine${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (valid engines: ${valid.join(', ')})`);
  }
}

export class Catalog {
  private readonly byName = new Map<string, EngineDefinition>();

  constructor(readonly engines: readonly EngineDefinition[]) {
    for (const engine of engines) {
      for (const name of [engine.id, engine.service]) {
        const other = this.byName.get(name);
        if (other && other !== engine) throw new Error(`engine name "${name}" is used by ${other.id} and ${engine.id}`);
        this.byName.set(name, engine);
      }
    }
  }

  /** By id or service alias, case-insensitively. */
  find(name: string): EngineDefinition | undefined {
    return this.byName.get(name) ?? this.byName.get(name.trim().toLowerCase());
  }

  /** The main catalog's engines tagged `default`. */
  defaults(): EngineDefinition[] {
    return this.engines.filter((e) => e.catalog === 'main' && e.tags.includes('default'));
  }

  /** Every accepted name: ids and aliases. */
  names(): string[] {
    return [...new Set(this.engines.flatMap((e) => [e.id, e.service]))].sort();
  }

  /**
   * Resolves the caller's names, keeping each name as its result key. Duplicates are dropped;
   * any unknown name is an error listing the valid ones.
   */
  select(names: readonly string[]): { key: string; engine: EngineDefinition }[] {
    const keys = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
    const unknown = keys.filter((k) => !this.find(k));
    if (unknown.length > 0) throw new UnknownEngineError(unknown, this.engines.map((e) => e.id));
    return keys.map((key) => ({ key, engine: this.find(key)! }));
  }

  /** Whether every required credential of the engine is configured. */
  isConfigured(engine: EngineDefinition, engineSettings: Readonly<Record<string, Record<string, unknown>>>): boolean {
    return missingCredentials(engine, resolveSettings(engine, engineSettings[engine.id])).length === 0;
  }
}

export async function loadCatalog(dir: string = ENGINES_DIR): Promise<Catalog> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.js')).sort();
  const engines: EngineDefinition[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { default?: unknown };
    if (isEngine(module.default)) engines.push(module.default);
  }
  return new Catalog(engines.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true })));
}

function isEngine(value: unknown): value is EngineDefinition {
  const e = value as Partial<EngineDefinition> | undefined;
  return typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.run === 'function' && Array.isArray(e.types);
}
