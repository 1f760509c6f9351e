/**
 * The bad-ASN lists on disk: `<data_dir>/bad_asn/lists.json`, downloaded on demand with the
 * engine call's HTTP client (proxy, TLS, retries) and kept in memory.
 *
 * Unlike the reference (a background thread; a failed download silently contributes nothing, so
 * an ASN it lists reads as "unlisted" until the next day):
 * - the file is refreshed when older than `refresh_hours` (file mtime), when a list's URL setting
 *   changed, or when a list's last download failed;
 * - a list that fails to download keeps its previous content, and the failure is retried on a
 *   later call once `refresh_retry_minutes` have passed, not on every call;
 * - concurrent calls share one refresh; the lists are downloaded in parallel;
 * - the file is written atomically (temporary file, then rename) and re-read only when it
 *   changed on disk (another process, an operator);
 * - with no list ever downloaded the lookup fails with the reasons, instead of "unlisted".
 *
 * File format: `{"last_updated": <epoch seconds>, "asns": {"<asn>": "<merged description>"},
 * "lists": {"<list id>": {url, fetched_at, error, asns}}}` — `last_updated` and `asns` as in the
 * reference's cache file; `lists` keeps each list apart so one failure never erases another.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as v from 'valibot';
import { EngineError, type EngineContext } from '../engine/contract.js';
import { UpstreamError } from '../http/errors.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../fs/private.js';
import { LIST_SOURCES, mergeLists, type AsnTable, type ListId, type ListSource } from './lists.js';

export const STORE_DIR = 'bad_asn';
export const STORE_FILE = 'lists.json';

export interface StoredList {
  /** Where the content came from. */
  url: string;
  /** Epoch ms of the last successful download; null when never downloaded. */
  fetched_at: number | null;
  /** Why the last download failed (content is then the previous one); null after a success. */
  error: string | null;
  asns: AsnTable;
}

export interface BadAsnFile {
  /** Epoch seconds of the last write. */
  last_updated: number;
  /** Merged table (as the reference's cache file has it); recomputed from `lists` on read. */
  asns: AsnTable;
  lists: Partial<Record<ListId, StoredList>>;
}

/** What a lookup uses. */
export interface BadAsnTable {
  /** ASN → merged description. */
  asns: ReadonlyMap<string, string>;
  /** Lists with content (downloaded at least once). */
  available: ListId[];
  /** Lists never downloaded, with why: an ASN absent from the others cannot be called unlisted. */
  missing: { id: ListId; name: string; error: string }[];
}

export interface StoreOptions {
  /** List id → URL to download it from. */
  urls: Record<ListId, string>;
  /** Age after which the lists are downloaded again. */
  refreshMs: number;
  /** Wait after a failed download before trying again. */
  retryMs: number;
}

const StoredListSchema = v.object({
  url: v.string(),
  fetched_at: v.nullable(v.number()),
  error: v.nullable(v.string()),
  asns: v.record(v.string(), v.string()),
});

const FileSchema = v.object({
  last_updated: v.number(),
  asns: v.optional(v.record(v.string(), v.string())),
  lists: v.object({
    spamhaus: v.optional(StoredListSchema),
    brianhama: v.optional(StoredListSchema),
    lethal_forensics: v.optional(StoredListSchema),
  }),
});

interface Loaded {
  /** Identity of the file this was read from or written to (inode, size, mtime). */
  signature: string;
  mtimeMs: number;
  file: BadAsnFile;
  table: BadAsnTable;
}

interface State {
  loaded?: Loaded;
  refreshing?: Promise<void>;
  /** Epoch ms of the last refresh that had a failure, and why. */
  failedAt?: number;
  failure?: string;
}

/** Per file path: several data directories (tests, several apps) never mix. */
const states = new Map<string, State>();

/** Forgets the in-memory copies and back-off (tests simulate a process restart with it). */
export function resetBadAsnMemory(): void {
  states.clear();
}

export function storePath(dataDir: string): string {
  return join(dataDir, STORE_DIR, STORE_FILE);
}

/**
 * The merged lists for this call: from memory, else the file, downloading the lists that need it
 * first (see the module comment). Throws an EngineError when no list has ever been downloaded.
 */
export async function loadBadAsnTable(ctx: EngineContext, options: StoreOptions): Promise<BadAsnTable> {
  const path = storePath(ctx.dataDir);
  let state = states.get(path);
  if (!state) states.set(path, (state = {}));

  if (state.refreshing) await state.refreshing;
  let loaded = await current(path, state);
  if (state.refreshing) {
    // Another call started a refresh while the file was being checked: share it.
    await state.refreshing;
    loaded = await current(path, state);
  }
  const due = dueLists(loaded, options, Date.now());
  const backingOff = state.failedAt !== undefined && Date.now() - state.failedAt < options.retryMs;
  if (due.length > 0 && !backingOff) {
    if (!state.refreshing) {
      state.refreshing = refresh(ctx, path, state, loaded, due, options).finally(() => {
        state.refreshing = undefined;
      });
    }
    await state.refreshing;
    loaded = state.loaded ?? null;
  }

  if (!loaded || loaded.table.available.length === 0) {
    const retryIn = state.failedAt !== undefined ? Math.max(0, state.failedAt + options.retryMs - Date.now()) : 0;
    const when = retryIn > 0 ? `; next attempt in ${Math.ceil(retryIn / 60_000)} min` : '';
    throw new EngineError(`bad ASN lists unavailable: ${state.failure ?? 'never downloaded'}${when}`);
  }
  return loaded.table;
}

/** The file's content: the memory copy while the file is unchanged, else read again. */
async function current(path: string, state: State): Promise<Loaded | null> {
  const info = await stat(path).catch(() => null);
  if (!info) {
    // Deleted behind our back: what we hold is still the best we have, but it is due.
    return state.loaded ? { ...state.loaded, mtimeMs: 0 } : null;
  }
  const signature = `${info.ino}:${info.size}:${info.mtimeMs}`;
  if (state.loaded?.signature === signature) return state.loaded;
  const file = await readFile(path, 'utf8').then(parseFile, () => null);
  // An unreadable or foreign file is as good as none: the next refresh replaces it.
  state.loaded = file ? loadedFrom(file, signature, info.mtimeMs) : undefined;
  return state.loaded ?? null;
}

function parseFile(text: string): BadAsnFile | null {
  try {
    const parsed = v.safeParse(FileSchema, JSON.parse(text));
    if (!parsed.success) return null;
    const lists: BadAsnFile['lists'] = {};
    for (const source of LIST_SOURCES) {
      const list = parsed.output.lists[source.id];
      if (list) lists[source.id] = list;
    }
    return { last_updated: parsed.output.last_updated, asns: mergeLists(tablesOf(lists)), lists };
  } catch {
    return null;
  }
}

function loadedFrom(file: BadAsnFile, signature: string, mtimeMs: number): Loaded {
  const available = LIST_SOURCES.filter((s) => file.lists[s.id]?.fetched_at != null).map((s) => s.id);
  const missing = LIST_SOURCES.filter((s) => file.lists[s.id]?.fetched_at == null)
    .map((s) => ({ id: s.id, name: s.name, error: file.lists[s.id]?.error ?? `${s.name}: never downloaded` }));
  return { signature, mtimeMs, file, table: { asns: new Map(Object.entries(file.asns)), available, missing } };
}

function tablesOf(lists: BadAsnFile['lists']): Partial<Record<ListId, AsnTable>> {
  return Object.fromEntries(Object.entries(lists).map(([id, list]) => [id, list.asns]));
}

/** Lists to download: all when the file is missing or old, else those new, moved, failed or old. */
function dueLists(loaded: Loaded | null, options: StoreOptions, now: number): ListSource[] {
  if (!loaded || now - loaded.mtimeMs >= options.refreshMs) return [...LIST_SOURCES];
  return LIST_SOURCES.filter((source) => {
    const list = loaded.file.lists[source.id];
    return !list || list.fetched_at === null || list.error !== null || list.url !== options.urls[source.id]
      || now - list.fetched_at >= options.refreshMs;
  });
}

async function refresh(ctx: EngineContext, path: string, state: State, loaded: Loaded | null, due: readonly ListSource[], options: StoreOptions): Promise<void> {
  const now = Date.now();
  const results = await Promise.allSettled(due.map(async (source) => {
    const response = await ctx.http.request(options.urls[source.id], { headers: { accept: source.accept } });
    return source.parse(response.text());
  }));

  const lists: BadAsnFile['lists'] = { ...loaded?.file.lists };
  const failures: string[] = [];
  let downloaded = 0;
  results.forEach((result, index) => {
    const source = due[index]!;
    if (result.status === 'fulfilled') {
      lists[source.id] = { url: options.urls[source.id], fetched_at: now, error: null, asns: result.value };
      downloaded++;
      return;
    }
    const reason = describe(result.reason, source);
    failures.push(reason);
    const previous = lists[source.id];
    // Keeps the previous content; the error marks the list for another attempt.
    lists[source.id] = previous ? { ...previous, error: reason } : { url: options.urls[source.id], fetched_at: null, error: reason, asns: {} };
  });

  if (failures.length > 0) {
    state.failedAt = now;
    state.failure = failures.join('; ');
  } else {
    state.failedAt = undefined;
    state.failure = undefined;
  }
  // Nothing new: the file stays as it is (an old mtime keeps it due once the back-off is over).
  if (downloaded === 0) return;

  const file: BadAsnFile = { last_updated: Math.floor(now / 1000), asns: mergeLists(tablesOf(lists)), lists };
  try {
    const signature = await writeAtomically(path, `${JSON.stringify(file)}\n`);
    state.loaded = loadedFrom(file, signature.id, signature.mtimeMs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    state.failedAt = now;
    state.failure = `cannot write ${path}: ${code}`;
  }
}

/** Writes a temporary file next to `path`, then renames it over `path`: readers see old or new, never half. */
async function writeAtomically(path: string, text: string): Promise<{ id: string; mtimeMs: number }> {
  ensurePrivateDir(dirname(path));
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, text, { encoding: 'utf8', mode: PRIVATE_FILE_MODE });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
  const info = await stat(path);
  return { id: `${info.ino}:${info.size}:${info.mtimeMs}`, mtimeMs: info.mtimeMs };
}

/** `<list name>: <one-line reason>`. */
function describe(error: unknown, source: ListSource): string {
  const message = error instanceof UpstreamError || error instanceof EngineError
    ? error.message
    : `internal error: ${error instanceof Error ? error.message : String(error)}`;
  const line = message.split('\n')[0]!.trim();
  return line.startsWith(source.name) ? line : `${source.name}: ${line}`;
}
