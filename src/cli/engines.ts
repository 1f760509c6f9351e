/** `oas engines`: the catalog and which engines are configured. Never prints a credential. */
import { loadListingSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import type { EngineDefinition } from '../engine/contract.js';
import { EXIT_OK } from './errors.js';

export interface EnginesOptions {
  json?: boolean;
  config?: string;
  catalog?: string;
}

export async function enginesCommand(options: EnginesOptions): Promise<number> {
  const flags: Partial<Config> = options.catalog === undefined ? {} : { catalog: options.catalog as Config['catalog'] };
  const { config, catalog } = await loadListingSettings({ file: options.config, flags });
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
    credentials: e.credentials.map((c) => ({ setting: c.setting, label: c.label, required: c.required !== false })),
    configured: catalog.isConfigured(e, config.engines),
    timeout_ms: e.defaults.timeout_ms,
  });
  const engines = catalog.engines.map(describe);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(engines, null, 2)}\n`);
    return EXIT_OK;
  }
  const { renderGrid } = await import('./table.js'); // cli-table3: not loaded for --json
  const rows = engines.map((e) => [
    e.id + (e.catalog === 'beyond' ? ' (beyond the spec)' : e.catalog !== catalog.variant ? ` (${e.catalog} catalog)` : ''),
    e.service,
    e.tags.join(', '),
    e.types.join(', ') + (e.reversed_ip ? ' (+ reversed IP)' : ''),
    e.credentials.length ? e.credentials.map((c) => c.label + (c.required ? '' : ' (optional)')).join(', ') : 'none',
    e.configured ? 'yes' : 'no',
  ]);
  process.stdout.write(`${renderGrid(['Engine', 'Service', 'Tags', 'Types', 'Credentials', 'Configured'], rows)}\n`);
  const members = catalog.engines.filter((e) => catalog.isMember(e)).length;
  process.stdout.write(`${members} engines in the ${catalog.variant} catalog (setting catalog, --catalog main|older)\n`);
  return EXIT_OK;
}
