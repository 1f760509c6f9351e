/**
 * The IANA RDAP bootstrap registry for domains (RFC 9224): which RDAP server answers for which
 * TLD. The file changes rarely and is ~100 KB, so it is downloaded at most once a day: kept in
 * the engine's persistent store (survives restarts) and in memory (no store round trip per
 * lookup). Engines sharing this module (rdap_whois, rdap) share the memory copy.
 */
import * as v from 'valibot';
import type { EngineContext } from '../engine/contract.js';

export const BOOTSTRAP_TTL_MS = 24 * 60 * 60 * 1000;

/** TLD (or longer suffix), lower-case, to the chosen RDAP base URL (always ending in "/"). */
export type BootstrapTable = Record<string, string>;

interface CachedTable {
  fetchedAt: number;
  services: BootstrapTable;
}

/** RFC 9224 section 4: `services` is a list of [[labels...], [base URLs...]]. */
const BootstrapSchema = v.object({
  version: v.optional(v.string()),
  publication: v.optional(v.string()),
  services: v.array(v.tuple([v.array(v.string()), v.array(v.string())])),
});

/** What we keep in the store; re-validated on read because the store outlives code versions. */
const CachedSchema = v.object({
  fetchedAt: v.number(),
  services: v.record(v.string(), v.string()),
});

const memory = new Map<string, CachedTable>();
/** Downloads in progress, so concurrent first lookups wait for one download instead of N. */
const inflight = new Map<string, Promise<CachedTable>>();

/** Forgets the in-memory copies (tests simulate a process restart with it). */
export function resetBootstrapMemory(): void {
  memory.clear();
  inflight.clear();
}

/** Store key: per URL, so pointing `bootstrap_url` elsewhere never serves a stale table. */
function storeKey(url: string): string {
  return `bootstrap:${url}`;
}

/**
 * The bootstrap table for `url`: memory, else the engine store, else one download shared by all
 * concurrent callers. When a refresh fails, an expired in-memory copy is used; without one the
 * download's UpstreamError is thrown.
 */
export async function loadBootstrap(ctx: EngineContext, url: string): Promise<BootstrapTable> {
  const now = Date.now();
  const cached = memory.get(url);
  if (cached && now - cached.fetchedAt < BOOTSTRAP_TTL_MS) return cached.services;

  let pending = inflight.get(url);
  if (!pending) {
    pending = fetchOrRestore(ctx, url).finally(() => inflight.delete(url));
    inflight.set(url, pending);
  }
  try {
    const table = await pending;
    memory.set(url, table);
    return table.services;
  } catch (error) {
    // A day-old table is still almost certainly right; better than no RDAP at all.
    if (cached) return cached.services;
    throw error;
  }
}

/**
 * `oas doctor` (issue 40) for the RDAP engines: the bootstrap file of their setting `bootstrap_url`,
 * downloaded (one call) unless this process already holds a fresh copy.
 */
export async function checkBootstrap(ctx: EngineContext): Promise<string> {
  const url = typeof ctx.settings.bootstrap_url === 'string' ? ctx.settings.bootstrap_url.trim() : '';
  const table = await loadBootstrap(ctx, url);
  return `RDAP bootstrap file: ${Object.keys(table).length} top-level domains`;
}

async function fetchOrRestore(ctx: EngineContext, url: string): Promise<CachedTable> {
  const stored = v.safeParse(CachedSchema, await ctx.store.get(storeKey(url)));
  if (stored.success && Date.now() - stored.output.fetchedAt < BOOTSTRAP_TTL_MS) return stored.output;

  const file = await ctx.http.json(url, BootstrapSchema);
  const table: CachedTable = { fetchedAt: Date.now(), services: parseBootstrap(file.services) };
  await ctx.store.set(storeKey(url), table, BOOTSTRAP_TTL_MS);
  return table;
}

/** Flattens the service list; per entry an https base URL is preferred over plain http. */
export function parseBootstrap(services: ReadonlyArray<readonly [readonly string[], readonly string[]]>): BootstrapTable {
  const table: BootstrapTable = {};
  for (const [labels, urls] of services) {
    const base = urls.find((u) => u.toLowerCase().startsWith('https://')) ?? urls[0];
    if (!base) continue;
    const normalized = base.endsWith('/') ? base : `${base}/`;
    for (const label of labels) {
      const key = label.toLowerCase().replace(/^\.|\.$/g, '');
      // The first entry wins, as a client reading the file top-down would do.
      if (key && !Object.hasOwn(table, key)) table[key] = normalized;
    }
  }
  return table;
}

/**
 * The RDAP base URL for a domain: the entry of its longest matching label suffix
 * (`example.co.uk` tries `example.co.uk`, `co.uk`, `uk`), or null when no registry publishes
 * RDAP for it.
 */
export function rdapBaseUrl(table: BootstrapTable, domain: string): string | null {
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length; i++) {
    const suffix = labels.slice(i).join('.');
    if (Object.hasOwn(table, suffix)) return table[suffix]!;
  }
  return null;
}
