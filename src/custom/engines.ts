/**
 * The engines of the setting `custom_engines`, made from their definitions (src/custom/definition.ts)
 * and appended to the catalog wherever it is built (src/app.ts): listed as `custom`, offered by
 * every catalog variant, never a default.
 */
import type { EngineDefinition } from '../engine/contract.js';
import { parseDefinition } from './definition.js';
import { customEngine } from './engine.js';

/**
 * One engine per definition; `builtins` are the engines of `engines/`, whose ids and aliases a
 * custom engine may not take. Throws DefinitionError naming the path of the first problem.
 */
export function customEngines(definitions: Readonly<Record<string, unknown>>, builtins: readonly EngineDefinition[]): EngineDefinition[] {
  const taken = new Set(builtins.flatMap((engine) => [engine.id, engine.service.toLowerCase()]));
  return Object.entries(definitions).map(([id, definition]) => customEngine(parseDefinition(id, definition, taken)) as EngineDefinition);
}
