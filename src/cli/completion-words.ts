/**
 * The fixed words `oas completion` proposes for a kind of value (src/cli/completion-spec.ts), each
 * from the constant the code checks the value against; and the built-in catalog's engine ids and
 * aliases, which a script proposes when `oas completion --list engines` gives none.
 */
import { MARK_VERDICTS } from '../analysis/knowledge.js';
import { Catalog, loadEngineDefinitions } from '../engine/catalog.js';
import { CATALOG_VARIANTS } from '../engine/contract.js';
import { PAP_LEVELS, TLP_LEVELS } from '../marking/levels.js';
import { PUSH_TARGETS } from '../push/types.js';
import { ROLES } from '../store/users.js';
import { VERDICTS } from '../verdict/verdict.js';
import { SHELLS } from './completion-spec.js';
import { OUTPUT_FORMATS } from './output.js';

export async function wordLists(): Promise<Record<string, readonly string[]>> {
  return {
    formats: OUTPUT_FORMATS,
    catalogs: CATALOG_VARIANTS,
    tlp: TLP_LEVELS,
    pap: PAP_LEVELS,
    // The setting log_format's values (src/config/schema.ts).
    'log-formats': ['text', 'json'],
    verdicts: VERDICTS,
    'mark-verdicts': MARK_VERDICTS,
    roles: ROLES,
    'push-targets': PUSH_TARGETS,
    shells: SHELLS,
    engines: new Catalog(await loadEngineDefinitions()).names(),
  };
}
