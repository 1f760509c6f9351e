/**
 * Analyses in Redis (`redis_url`), the same for every server and worker:
 *
 *   oas:analysis:<id>       hash: header (JSON), complete (0/1), summary (the history's item,
 *                           JSON), search (its observables, lower-case, one per line),
 *                           started_by (who started it, for the history's "mine"; absent when unknown)
 *   oas:analysis:<id>:rows  hash: observable index -> result JSON (one field per observable:
 *                           writing one twice replaces it, so a job run twice duplicates nothing)
 *   oas:analysis:<id>:verdicts  hash: observable index -> its verdict JSON (`verdictText`),
 *                           written with its row; absent for rows of older versions (readers
 *                           work it out then)
 *   oas:analyses            sorted set of ids by creation time (the history, newest first)
 *   oas:analyses:running    set of the ids not complete yet
 *   oas:seen:z:<key>        sorted set: the ids of the analyses that held the observable of this
 *                           key (`seenKey` of src/store/seen.ts), by their creation time (issue 38)
 *   oas:seen:v:<key>        hash: analysis id -> the observable's verdict in it
 *
 * Nothing here expires: like the SQLite file, the history is kept until someone deletes it.
 */
import type { Redis } from 'ioredis';
import { parseVerdictCounts, SHOWN_OBSERVABLES, storedMarking } from '../store/history.js';
import type { AnalysisHeader, AnalysisStore, HistoryQuery, ResultRow, RowWrite } from '../store/analysis-store.js';
import { seenKey, SEEN_LOOKUP_BATCH, type SeenHistory, type SeenRecord } from '../store/seen.js';
import type { SeenBefore } from '../runner/result.js';
import type { HistoryItemView, HistoryView } from '../view/types.js';

export const KEY_PREFIX = 'oas:';
/** Rows written per HSET. */
const WRITE_ROWS = 500;
/** Ids whose search text is read at once when the history is searched. */
const SEARCH_BATCH = 500;

/** What the history shows of an analysis, kept beside its header (never the whole header). */
type Summary = Omit<HistoryItemView, 'engine_labels'>;

export class RedisAnalysisStore implements AnalysisStore {
  constructor(private readonly redis: Redis, private readonly prefix = KEY_PREFIX) {}

  private key(id: string): string {
    return `${this.prefix}analysis:${id}`;
  }

  private rowsKey(id: string): string {
    return `${this.prefix}analysis:${id}:rows`;
  }

  private verdictsKey(id: string): string {
    return `${this.prefix}analysis:${id}:verdicts`;
  }

  private get index(): string {
    return `${this.prefix}analyses`;
  }

  private get running(): string {
    return `${this.prefix}analyses:running`;
  }

  /** The Cortex jobs (issue 39) not deleted, by creation time. */
  private get cortexIndex(): string {
    return `${this.prefix}analyses:cortex`;
  }

  /** The analyses that held the observable of this key, by creation time. */
  private seenTimes(key: string): string {
    return `${this.prefix}seen:z:${key}`;
  }

  /** Its verdict in each of them. */
  private seenVerdicts(key: string): string {
    return `${this.prefix}seen:v:${key}`;
  }

  /** Adds a record's two writes to a MULTI or a pipeline. */
  private addSeen(batch: { zadd(key: string, score: number, member: string): unknown; hset(key: string, field: string, value: string): unknown }, record: SeenRecord): void {
    batch.zadd(this.seenTimes(record.value), Date.parse(record.at) || 0, record.analysis_id);
    batch.hset(this.seenVerdicts(record.value), record.analysis_id, record.verdict);
  }

  /** The header's hash fields and its place in the history. */
  private fields(header: AnalysisHeader): { header: string; complete: string; summary: string; search: string; started_by?: string } {
    const summary: Summary = {
      id: header.id,
      created_at: header.created_at,
      complete: header.complete,
      duration_ms: header.duration_ms,
      engines: header.engines,
      observable_count: header.observables.length,
      observables: header.observables.slice(0, SHOWN_OBSERVABLES).map(({ value, type }) => ({ value, type })),
      verdicts: header.complete ? header.verdicts ?? null : null,
      started_by: header.started_by ?? null,
      tlp: header.tlp ?? null,
      pap: header.pap ?? null,
    };
    return {
      header: JSON.stringify(header),
      complete: header.complete ? '1' : '0',
      summary: JSON.stringify(summary),
      search: header.observables.map((o) => o.value.toLowerCase()).join('\n'),
      ...(header.started_by !== undefined ? { started_by: header.started_by } : {}),
    };
  }

  async putHeader(header: AnalysisHeader): Promise<void> {
    const multi = this.redis.multi()
      .hset(this.key(header.id), this.fields(header))
      .zadd(this.index, createdScore(header), header.id);
    if (header.complete) multi.srem(this.running, header.id);
    else multi.sadd(this.running, header.id);
    if (header.cortex && !header.cortex.deleted) multi.zadd(this.cortexIndex, createdScore(header), header.id);
    else if (header.cortex) multi.zrem(this.cortexIndex, header.id);
    await exec(multi);
  }

  /**
   * Saves the header of a completed analysis unless it is complete already, atomically: of two
   * workers completing it at once (a job run twice), one writes, and the header a client saw
   * complete never changes. Whether this call wrote it.
   */
  async completeOnce(header: AnalysisHeader): Promise<boolean> {
    if (!header.complete) throw new Error('completeOnce: the header is not complete');
    const fields = this.fields(header);
    const wrote = await this.redis.eval(
      COMPLETE_ONCE, 3, this.key(header.id), this.index, this.running,
      fields.header, fields.summary, fields.search, String(createdScore(header)), header.id, fields.started_by ?? '',
    );
    return wrote === 1;
  }

  async remove(id: string): Promise<void> {
    const header = await this.getHeader(id);
    const multi = this.redis.multi().del(this.key(id), this.rowsKey(id), this.verdictsKey(id)).zrem(this.index, id).zrem(this.cortexIndex, id).srem(this.running, id);
    for (const key of new Set(header?.observables.map((o) => seenKey(o.value, o.type)))) multi.zrem(this.seenTimes(key), id).hdel(this.seenVerdicts(key), id);
    await exec(multi);
  }

  /**
   * Redis schema 2 (src/scale/redis-schema.ts): puts the stored Cortex jobs not deleted in their
   * index, reading every header a batch at a time (a Redis of 0.1.0 has none there). Idempotent.
   */
  async indexCortexJobs(): Promise<void> {
    for (let start = 0; ; start += SEARCH_BATCH) {
      const batch = await this.redis.zrange(this.index, start, start + SEARCH_BATCH - 1);
      if (batch.length === 0) return;
      const pipeline = this.redis.pipeline();
      for (const id of batch) pipeline.hget(this.key(id), 'header');
      const texts = await exec(pipeline);
      const jobs = this.redis.pipeline();
      for (const text of texts) {
        if (typeof text !== 'string' || !text.includes('"cortex"')) continue;
        const header = JSON.parse(text) as AnalysisHeader;
        if (header.cortex && !header.cortex.deleted) jobs.zadd(this.cortexIndex, createdScore(header), header.id);
      }
      if (jobs.length > 0) await exec(jobs);
    }
  }

  async cortexJobs(limit: number): Promise<AnalysisHeader[]> {
    const ids = limit > 0 ? await this.redis.zrevrange(this.cortexIndex, 0, Math.floor(limit) - 1) : [];
    const headers = await Promise.all(ids.map((id) => this.getHeader(id)));
    return headers.filter((h): h is AnalysisHeader => h?.cortex !== undefined && !h.cortex.deleted);
  }

  async getHeader(id: string): Promise<AnalysisHeader | undefined> {
    const [text, cortexDeleted] = await this.redis.hmget(this.key(id), 'header', 'cortex_deleted');
    if (text === null || text === undefined) return undefined;
    const header = JSON.parse(text) as AnalysisHeader;
    // A deleted Cortex job's flag is a field of its own (markCortexDeleted), never lost to a header written after it.
    if (cortexDeleted === '1' && header.cortex) header.cortex = { ...header.cortex, deleted: true };
    return header;
  }

  async markCortexDeleted(id: string): Promise<void> {
    await exec(this.redis.multi().hset(this.key(id), 'cortex_deleted', '1').zrem(this.cortexIndex, id));
  }

  async completeOf(id: string): Promise<boolean | undefined> {
    const flag = await this.redis.hget(this.key(id), 'complete');
    return flag === null ? undefined : flag === '1';
  }

  async putRows(id: string, rows: readonly RowWrite[]): Promise<void> {
    for (let i = 0; i < rows.length; i += WRITE_ROWS) {
      const fields: string[] = [];
      const verdicts: string[] = [];
      const unjudged: string[] = [];
      for (const [index, text, verdict] of rows.slice(i, i + WRITE_ROWS)) {
        fields.push(String(index), text);
        if (verdict === undefined) unjudged.push(String(index));
        else verdicts.push(String(index), verdict);
      }
      const multi = this.redis.multi().hset(this.rowsKey(id), ...fields);
      if (verdicts.length > 0) multi.hset(this.verdictsKey(id), ...verdicts);
      // A row replaced without a verdict keeps none of the one it replaced.
      if (unjudged.length > 0) multi.hdel(this.verdictsKey(id), ...unjudged);
      await exec(multi);
    }
  }

  /**
   * Writes one observable's result and its verdict (`verdictText`), and says how many observables
   * of the analysis have one now (atomically: of two workers finishing the last two observables,
   * exactly one sees them all).
   */
  async addRow(id: string, index: number, text: string, verdict: string, seen?: SeenRecord): Promise<number> {
    const multi = this.redis.multi().hset(this.rowsKey(id), String(index), text).hset(this.verdictsKey(id), String(index), verdict).hlen(this.rowsKey(id));
    // With it, that the analysis held the observable (issue 38), in the same transaction.
    if (seen) this.addSeen(multi, seen);
    const [, , count] = (await exec(multi)) as [number, number, number];
    return count;
  }

  /**
   * The earlier analyses that held each key (issue 38): one Lua script per few hundred keys, each
   * key two sorted-set and one hash lookup inside Redis (a sorted set's size, its first and last
   * members: never read whole).
   */
  async seenBefore(keys: readonly string[], exclude = ''): Promise<Map<string, SeenBefore>> {
    const found = new Map<string, SeenBefore>();
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += SEEN_LOOKUP_BATCH) {
      const chunk = unique.slice(i, i + SEEN_LOOKUP_BATCH);
      const redisKeys = chunk.flatMap((key) => [this.seenTimes(key), this.seenVerdicts(key)]);
      const reply = (await this.redis.eval(SEEN_BEFORE, redisKeys.length, ...redisKeys, exclude)) as (string | number)[];
      chunk.forEach((key, k) => {
        const [count, first, last, id, verdict] = reply.slice(k * 5, k * 5 + 5);
        if (!count) return;
        found.set(key, { count: Number(count), first: isoOf(first), last: isoOf(last), last_verdict: String(verdict || 'unknown'), last_analysis_id: String(id) });
      });
    }
    return found;
  }

  async recordSeen(records: readonly SeenRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += WRITE_ROWS) {
      const pipeline = this.redis.pipeline();
      for (const record of records.slice(i, i + WRITE_ROWS)) this.addSeen(pipeline, record);
      await exec(pipeline);
    }
  }

  async observableHistory(key: string, limit: number): Promise<SeenHistory> {
    const count = Math.max(0, Math.floor(limit));
    const [total, listed] = (await exec(this.redis.pipeline().zcard(this.seenTimes(key)).zrevrange(this.seenTimes(key), 0, count - 1, 'WITHSCORES'))) as [number, string[]];
    const ids = count === 0 ? [] : listed.filter((_, i) => i % 2 === 0);
    const verdicts = ids.length > 0 ? await this.redis.hmget(this.seenVerdicts(key), ...ids) : [];
    return { total, items: ids.map((id, i) => ({ analysis_id: id, at: isoOf(listed[i * 2 + 1]), verdict: verdicts[i] ?? 'unknown' })) };
  }

  /** When the analysis began (from its history summary: never the whole header); undefined when unknown. */
  async createdAt(id: string): Promise<string | undefined> {
    const text = await this.redis.hget(this.key(id), 'summary');
    if (text === null) return undefined;
    const at = (JSON.parse(text) as Partial<Summary>).created_at;
    return typeof at === 'string' ? at : undefined;
  }

  async hasRow(id: string, index: number): Promise<boolean> {
    return (await this.redis.hexists(this.rowsKey(id), String(index))) === 1;
  }

  async rowCount(id: string): Promise<number> {
    return this.redis.hlen(this.rowsKey(id));
  }

  async rows(id: string, have: ReadonlySet<number>): Promise<{ idx: number; value: string | null; verdict?: string | null }[]> {
    const indices = await this.savedIndices(id);
    const wanted = indices.filter((idx) => !have.has(idx));
    const read = wanted.length > 0 ? await this.read(id, wanted) : [];
    const out: { idx: number; value: string | null; verdict?: string | null }[] = indices.filter((idx) => have.has(idx)).map((idx) => ({ idx, value: null }));
    for (const row of read) if (row !== undefined) out.push(row);
    return out;
  }

  async rowPage(id: string, after: number, limit: number): Promise<ResultRow[]> {
    // A finished analysis has a row for every index: its pages are read straight (one HMGET
    // each); only a page with a gap (a running analysis, the end) lists the indices there are.
    const window = Array.from({ length: Math.max(0, Math.floor(limit)) }, (_, i) => after + 1 + i);
    if (window.length > 0) {
      const dense = await this.read(id, window);
      if (dense.every((row) => row !== undefined)) return dense as ResultRow[];
    }
    const indices = (await this.savedIndices(id)).filter((idx) => idx > after).sort((a, b) => a - b).slice(0, limit);
    if (indices.length === 0) return [];
    return (await this.read(id, indices)).filter((row) => row !== undefined);
  }

  /**
   * The rows of these indices with their verdicts, read together (one MULTI: a verdict is always
   * its row's); undefined for an index without a row. A row without a verdict (written by an
   * older version) has no `verdict` key.
   */
  private async read(id: string, indices: readonly number[]): Promise<(ResultRow | undefined)[]> {
    const fields = indices.map(String);
    const [values, verdicts] = (await exec(this.redis.multi().hmget(this.rowsKey(id), ...fields).hmget(this.verdictsKey(id), ...fields))) as [(string | null)[], (string | null)[]];
    return indices.map((idx, i) => {
      const value = values[i];
      if (value === null || value === undefined) return undefined;
      const verdict = verdicts[i];
      return verdict === null || verdict === undefined ? { idx, value } : { idx, value, verdict };
    });
  }

  async savedIndices(id: string): Promise<number[]> {
    return (await this.redis.hkeys(this.rowsKey(id))).map(Number).filter(Number.isInteger);
  }

  /** How many analyses not complete yet `owner` started (their `started_by`; unknown counts as `anonymous`). */
  async runningOf(owner: string): Promise<number> {
    const ids = await this.redis.smembers(this.running);
    if (ids.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.key(id), 'started_by');
    const owners = (await exec(pipeline)) as (string | null)[];
    return owners.filter((who) => (who ?? 'anonymous') === owner).length;
  }

  async unfinished(): Promise<AnalysisHeader[]> {
    const ids = await this.redis.smembers(this.running);
    const headers = await Promise.all(ids.map((id) => this.getHeader(id)));
    return headers.filter((h): h is AnalysisHeader => h !== undefined && !h.complete && h.origin === 'server');
  }

  async history(q: HistoryQuery, labelOf: (key: string) => string): Promise<HistoryView> {
    const needle = q.query.trim().toLowerCase();
    const from = (q.page - 1) * q.perPage;
    const startedBy = q.startedBy;
    let total: number;
    let ids: string[];
    if (needle === '' && startedBy === undefined) {
      total = await this.redis.zcard(this.index);
      ids = from < total ? await this.redis.zrevrange(this.index, from, from + q.perPage - 1) : [];
    } else if (needle.includes('\n')) {
      // The search text joins the observables with newlines; no observable holds one, so a
      // needle that does matches nothing (it would otherwise match across two observables).
      total = 0;
      ids = [];
    } else {
      // Every analysis's search text (and who started it) is read, a batch at a time, newest first.
      total = 0;
      ids = [];
      const size = await this.redis.zcard(this.index);
      for (let start = 0; start < size; start += SEARCH_BATCH) {
        const batch = await this.redis.zrevrange(this.index, start, start + SEARCH_BATCH - 1);
        const pipeline = this.redis.pipeline();
        for (const id of batch) pipeline.hmget(this.key(id), 'search', 'started_by');
        const texts = await exec(pipeline);
        batch.forEach((id, i) => {
          const [text, by] = (texts[i] ?? []) as (string | null)[];
          if (typeof text !== 'string' || !text.includes(needle)) return;
          if (startedBy !== undefined && by !== startedBy) return;
          if (total >= from && ids.length < q.perPage) ids.push(id);
          total++;
        });
      }
    }
    let items: HistoryItemView[] = [];
    if (ids.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hget(this.key(id), 'summary');
      const summaries = await exec(pipeline);
      items = summaries.flatMap((text) => {
        if (typeof text !== 'string') return [];
        const summary = JSON.parse(text) as Summary;
        return [{
          ...summary,
          engine_labels: summary.engines.map(labelOf),
          verdicts: summary.complete ? parseVerdictCounts(summary.verdicts) : null,
          started_by: typeof summary.started_by === 'string' ? summary.started_by : null,
          // Summaries written by older versions have none.
          ...storedMarking(summary.tlp, summary.pap),
        }];
      });
    }
    return { query: q.query, page: q.page, per_page: q.perPage, total, items };
  }
}

/** A sorted set's score (ms since the epoch) as ISO 8601. */
function isoOf(score: string | number | undefined): string {
  const ms = Number(score);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/**
 * KEYS: per key its sorted set and hash (src/store/seen.ts); ARGV[1]: the analysis to leave out
 * ('' for none). Per key five values: count (0: none), first and last score, the last's id and
 * its verdict. The one left out is at most one member: the two first and two last members are
 * enough to skip it.
 */
const SEEN_BEFORE = `
local out = {}
local skip = ARGV[1]
for i = 1, #KEYS, 2 do
  local n = redis.call('ZCARD', KEYS[i])
  if skip ~= '' and n > 0 and redis.call('ZSCORE', KEYS[i], skip) then n = n - 1 end
  if n <= 0 then
    out[#out + 1] = 0; out[#out + 1] = ''; out[#out + 1] = ''; out[#out + 1] = ''; out[#out + 1] = ''
  else
    local firsts = redis.call('ZRANGE', KEYS[i], 0, 1, 'WITHSCORES')
    local first = firsts[1] == skip and firsts[4] or firsts[2]
    local lasts = redis.call('ZRANGE', KEYS[i], -2, -1, 'WITHSCORES')
    local id, score = lasts[#lasts - 1], lasts[#lasts]
    if id == skip then id, score = lasts[1], lasts[2] end
    out[#out + 1] = n; out[#out + 1] = first; out[#out + 1] = score; out[#out + 1] = id
    out[#out + 1] = redis.call('HGET', KEYS[i + 1], id) or ''
  end
end
return out
`;

/** The history's order: creation time. */
function createdScore(header: AnalysisHeader): number {
  return Date.parse(header.created_at) || Date.now();
}

/** KEYS: the header's hash, the history, the running set; ARGV: header, summary, search, score, id, started_by ('' when unknown). */
const COMPLETE_ONCE = `
if redis.call('HGET', KEYS[1], 'complete') == '1' then return 0 end
redis.call('HSET', KEYS[1], 'header', ARGV[1], 'complete', '1', 'summary', ARGV[2], 'search', ARGV[3])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'started_by', ARGV[6]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('SREM', KEYS[3], ARGV[5])
return 1
`;

/** Runs a MULTI or a pipeline; the first command error is thrown, else the replies. */
async function exec(batch: { exec(): Promise<[Error | null, unknown][] | null> }): Promise<unknown[]> {
  const replies = await batch.exec();
  if (replies === null) throw new Error('Redis transaction aborted');
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, value]) => value);
}
