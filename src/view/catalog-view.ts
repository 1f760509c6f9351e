/**
 * The engine picker's data: every engine, whether it can be selected, and where to configure it.
 * `default` (and the `default` tag) follow the catalog variant the server runs. Each engine's
 * marking (issue 34): where it sends an observable, and its TLP/PAP ceilings with its settings; the
 * levels and the server's default marking, which the form offers.
 */
import type { Catalog } from '../engine/catalog.js';
import { resolveSettings } from '../engine/context.js';
import { whereToSet } from '../engine/credentials.js';
import type { Config } from '../config/schema.js';
import { ceilingsOf, PAP_LEVELS, parsePap, parseTlp, TLP_LEVELS } from '../marking/levels.js';
import type { CatalogView } from './types.js';

export function catalogView(catalog: Catalog, config: Config): CatalogView {
  return {
    api_prefix: config.api_prefix,
    catalog: catalog.variant,
    engines: catalog.engines.map((engine) => {
      const required = engine.credentials.filter((c) => c.required !== false);
      const ceilings = ceilingsOf(engine, resolveSettings(engine, config.engines[engine.id]));
      return {
        id: engine.id,
        service: engine.service,
        label: engine.label,
        description: engine.description,
        // `default` means "preselected here": an extra of another variant (the older catalog's
        // `rdap` on a main-catalog server) is not a default of the catalog the server runs.
        tags: engine.tags.filter((tag) => tag !== 'default' || catalog.isDefault(engine)),
        types: [...engine.types],
        catalog: catalog.variantOf(engine),
        default: catalog.isDefault(engine),
        configured: catalog.isConfigured(engine, config.engines),
        credentials: engine.credentials.map((c) => c.label),
        configure_hint: required
          .map((c) => whereToSet(engine, c))
          .join('; '),
        disclosure: engine.disclosure,
        touches_target: engine.touchesTarget,
        max_tlp: ceilings.maxTlp,
        max_pap: ceilings.maxPap,
      };
    }),
    sets: [...catalog.sets].map(([name, members]) => ({ name, engines: [...new Set(members.map((m) => catalog.find(m)!.id))] })),
    tlp_levels: [...TLP_LEVELS],
    pap_levels: [...PAP_LEVELS],
    default_tlp: parseTlp(config.default_tlp),
    default_pap: parsePap(config.default_pap),
  };
}
