/**
 * Analyses in Redis (`redis_url`), the same for every server and worker:
 *
 *   oas:analysis:<id>       hash: header (JSON), complete (0/1), summary (the history's item,
 *                           JSON), search (its observables, lower-case, one per line)
 *   oas:analysis:<id>:rows  hash: observable index -> result JSON (one field per observable:
 *                           writing one twice replaces it, so a job run twice duplicates nothing)
 *   oas:analyses            sorted set of ids by creation time (the history, newest first)
 *   oas:analyses:running    set of the ids not complete yet
 *
 * Nothing here expires: like the SQLite file, the history is kept until someone deletes it.
 */
import type { Redis } from 'ioredis';
import { parseVerdictCounts, SHOWN_OBSERVABLES } from '../analysis/history.js';
import type { AnalysisHeader } from '../analysis/service.js';
import type { AnalysisStore, HistoryQuery, ResultRow } from '../store/analysis-store.js';
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

  private get index(): string {
    return `${this.prefix}analyses`;
  }

  private get running(): string {
    return `${this.prefix}analyses:running`;
  }

  async putHeader(header: AnalysisHeader): Promise<void> {
    const summary: Summary = {
      id: header.id,
      created_at: header.created_at,
      complete: header.complete,
      duration_ms: header.duration_ms,
      engines: header.engines,
      observable_count: header.observables.length,
      observables: header.observables.slice(0, SHOWN_OBSERVABLES).map(({ value, type }) => ({ value, type })),
      verdicts: header.complete ? header.verdicts ?? null : null,
    };
    const multi = this.redis.multi()
      .hset(this.key(header.id), {
        header: JSON.stringify(header),
        complete: header.complete ? '1' : '0',
        summary: JSON.stringify(summary),
        search: header.observables.map((o) => o.value.toLowerCase()).join('\n'),
      })
      .zadd(this.index, Date.parse(header.created_at) || Date.now(), header.id);
    if (header.complete) multi.srem(this.running, header.id);
    else multi.sadd(this.running, header.id);
    await exec(multi);
  }

  async getHeader(id: string): Promise<AnalysisHeader | undefined> {
    const text = await this.redis.hget(this.key(id), 'header');
    return text === null ? undefined : (JSON.parse(text) as AnalysisHeader);
  }

  async completeOf(id: string): Promise<boolean | undefined> {
    const flag = await this.redis.hget(this.key(id), 'complete');
    return flag === null ? undefined : flag === '1';
  }

  async putRows(id: string, rows: readonly (readonly [number, string])[]): Promise<void> {
    for (let i = 0; i < rows.length; i += WRITE_ROWS) {
      const fields: string[] = [];
      for (const [index, text] of rows.slice(i, i + WRITE_ROWS)) fields.push(String(index), text);
      await this.redis.hset(this.rowsKey(id), ...fields);
    }
  }

  /**
   * Writes one observable's result and says how many observables of the analysis have one now
   * (atomically: of two workers finishing the last two observables, exactly one sees them all).
   */
  async addRow(id: string, index: number, text: string): Promise<number> {
    const [, count] = (await exec(this.redis.multi().hset(this.rowsKey(id), String(index), text).hlen(this.rowsKey(id)))) as [number, number];
    return count;
  }

  async hasRow(id: string, index: number): Promise<boolean> {
    return (await this.redis.hexists(this.rowsKey(id), String(index))) === 1;
  }

  async rowCount(id: string): Promise<number> {
    return this.redis.hlen(this.rowsKey(id));
  }

  async rows(id: string, have: ReadonlySet<number>): Promise<{ idx: number; value: string | null }[]> {
    const indices = await this.savedIndices(id);
    const wanted = indices.filter((idx) => !have.has(idx));
    const values = wanted.length > 0 ? await this.redis.hmget(this.rowsKey(id), ...wanted.map(String)) : [];
    const out: { idx: number; value: string | null }[] = indices.filter((idx) => have.has(idx)).map((idx) => ({ idx, value: null }));
    wanted.forEach((idx, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) out.push({ idx, value });
    });
    return out;
  }

  async rowPage(id: string, after: number, limit: number): Promise<ResultRow[]> {
    const indices = (await this.savedIndices(id)).filter((idx) => idx > after).sort((a, b) => a - b).slice(0, limit);
    if (indices.length === 0) return [];
    const values = await this.redis.hmget(this.rowsKey(id), ...indices.map(String));
    const out: ResultRow[] = [];
    indices.forEach((idx, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) out.push({ idx, value });
    });
    return out;
  }

  async savedIndices(id: string): Promise<number[]> {
    return (await this.redis.hkeys(this.rowsKey(id))).map(Number).filter(Number.isInteger);
  }

  async unfinished(): Promise<AnalysisHeader[]> {
    const ids = await this.redis.smembers(this.running);
    const headers = await Promise.all(ids.map((id) => this.getHeader(id)));
    return headers.filter((h): h is AnalysisHeader => h !== undefined && !h.complete && h.origin === 'server');
  }

  async history(q: HistoryQuery, labelOf: (key: string) => string): Promise<HistoryView> {
    const needle = q.query.trim().toLowerCase();
    const from = (q.page - 1) * q.perPage;
    let total: number;
    let ids: string[];
    if (needle === '') {
      total = await this.redis.zcard(this.index);
      ids = from < total ? await this.redis.zrevrange(this.index, from, from + q.perPage - 1) : [];
    } else {
      // Every analysis's search text is read, a batch at a time, newest first.
      total = 0;
      ids = [];
      const size = await this.redis.zcard(this.index);
      for (let start = 0; start < size; start += SEARCH_BATCH) {
        const batch = await this.redis.zrevrange(this.index, start, start + SEARCH_BATCH - 1);
        const pipeline = this.redis.pipeline();
        for (const id of batch) pipeline.hget(this.key(id), 'search');
        const texts = await exec(pipeline);
        batch.forEach((id, i) => {
          const text = texts[i];
          if (typeof text !== 'string' || !text.includes(needle)) return;
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
        return [{ ...summary, engine_labels: summary.engines.map(labelOf), verdicts: summary.complete ? parseVerdictCounts(summary.verdicts) : null }];
      });
    }
    return { query: q.query, page: q.page, per_page: q.perPage, total, items };
  }
}

/** Runs a MULTI or a pipeline; the first command error is thrown, else the replies. */
async function exec(batch: { exec(): Promise<[Error | null, unknown][] | null> }): Promise<unknown[]> {
  const replies = await batch.exec();
  if (replies === null) throw new Error('Redis transaction aborted');
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, value]) => value);
}
