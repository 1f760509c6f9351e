/**
 * The engine picker's data: every engine, whether it can be selected, and where to configure it.
 * `default` (and the `default` tag) follow the catalog variant the server runs.
 */
import type { Catalog } from '../engine/catalog.js';
import { whereToSet } from '../engine/credentials.js';
import type { Config } from '../config/schema.js';
import type { CatalogView } from './types.js';

export function catalogView(catalog: Catalog, config: Config): CatalogView {
  return {
    api_prefix: config.api_prefix,
    catalog: catalog.variant,
    engines: catalog.engines.map((engine) => {
      const required = engine.credentials.filter((c) => c.required !== false);
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
      };
    }),
    sets: [...catalog.sets].map(([name, members]) => ({ name, engines: [...new Set(members.map((m) => catalog.find(m)!.id))] })),
  };
}
