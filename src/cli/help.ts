/**
 * The part of `oas analyze --help` that needs the catalog: which engine applies to which
 * observable type, by service name. Start-up cost: imported (with the catalog, from the engines'
 * cached declarations when fresh) only when that help is asked for.
 */
import { loadListingSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import { Catalog, loadEngineDefinitions } from '../engine/catalog.js';
import type { CatalogVariant, EngineDefinition } from '../engine/contract.js';
import { OBSERVABLE_TYPES, type ObservableType } from '../observables/types.js';

/**
 * The catalog the analysis would use: the configuration's (`--config`, `--catalog`, OAS_CONFIG,
 * ./oas.config.json); when that configuration cannot be read, the asked or main variant alone
 * (help never fails for a configuration error: the analysis itself reports it).
 */
export async function helpCatalog(file: string | undefined, variant: string | undefined): Promise<Catalog> {
  const flags: Partial<Config> = variant === undefined ? {} : { catalog: variant as Config['catalog'] };
  try {
    return (await loadListingSettings({ file, flags })).catalog;
  } catch {
    return new Catalog(await loadEngineDefinitions(), (variant === 'older' ? 'older' : 'main') as CatalogVariant);
  }
}

/** `Engines per observable type (...)`: one entry per type (types with the same engines share one), wrapped to `width`. */
export function enginesPerType(catalog: Catalog, width = 80): string {
  const name = (e: EngineDefinition) => `${e.service}${catalog.isDefault(e) ? '*' : ''}`;
  const sorted = [...catalog.engines].sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
  const groups: { types: ObservableType[]; direct: string; reversed: string }[] = [];
  for (const type of OBSERVABLE_TYPES) {
    const direct = sorted.filter((e) => e.types.includes(type)).map(name).join(', ');
    // Domains and URLs: the IP-only engines that also run on the address they resolve to.
    const reversed = type === 'FQDN' || type === 'URL'
      ? sorted.filter((e) => e.reversedIp && !e.types.includes(type) && (e.types.includes('IPv4') || e.types.includes('IPv6'))).map(name).join(', ')
      : '';
    const same = groups.find((g) => g.direct === direct && g.reversed === reversed);
    if (same) same.types.push(type);
    else groups.push({ types: [type], direct, reversed });
  }
  const labels = groups.map((g) => g.types.join(', '));
  const column = Math.min(Math.max(...labels.map((l) => l.length)) + 4, 24);
  const max = Math.max(40, width);
  const lines = wrapList(`Engines per observable type (${catalog.variant} catalog; * = default engine; give these names or the ids to --engines; \`oas engines\` tells which need credentials):`, max);
  groups.forEach((group, i) => {
    const label = `  ${labels[i]}`;
    const first = label.length + 2 > column ? [label] : [];
    const body = [...wrapList(group.direct || '(none)', max - column)];
    if (group.reversed) body.push(...wrapList(`and on the IP it resolves to: ${group.reversed}`, max - column));
    const lead = first.length ? '' : label;
    lines.push(...first);
    body.forEach((text, j) => lines.push(`${(j === 0 ? lead : '').padEnd(column)}${text}`));
  });
  return lines.join('\n');
}

/** The words of a comma-separated list in lines of at most `width` characters. */
function wrapList(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
