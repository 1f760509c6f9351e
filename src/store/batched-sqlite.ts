/**
 * The engine cache's table, written and read in batches (issue 33). Every engine call reads the
 * cache once and writes its answer once; with @keyv/sqlite as it is, each of those is a statement
 * of its own (prepared, run and, for a write, committed on its own), so 10 000 lookups cost
 * 20 000 round trips to SQLite's thread and 10 000 commits. Here the reads and writes asked for
 * in the same turn of the event loop go together: one `SELECT ... IN (json_each(?))` for the
 * reads, one multi-row upsert (one statement, one commit) for the writes.
 *
 * The same table and format as @keyv/sqlite (it is that class, with `get` and `set` batched), so
 * files written by earlier versions are read as they were. A read of a key whose write is still
 * pending answers the pending value. A batch that fails rejects each of its callers, as one
 * statement each would have.
 */
import KeyvSqlite from '@keyv/sqlite';

/** Rows per upsert: two parameters each, far below SQLite's 32 766 parameters per statement. */
const WRITE_ROWS = 500;
/** Keys per read (one JSON parameter). */
const READ_KEYS = 1000;

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

export class BatchedKeyvSqlite extends KeyvSqlite {
  private pendingWrites = new Map<string, { value: string; waiters: Waiter<void>[] }>();
  private pendingReads = new Map<string, Waiter<string | undefined>[]>();
  private scheduled = false;

  override async get(key: string): Promise<any> {
    const pending = this.pendingWrites.get(key);
    if (pending) return pending.value;
    return new Promise<string | undefined>((resolve, reject) => {
      const waiters = this.pendingReads.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pendingReads.set(key, [{ resolve, reject }]);
      this.schedule();
    });
  }

  override async set(key: string, value: any): Promise<any> {
    return new Promise<void>((resolve, reject) => {
      const pending = this.pendingWrites.get(key);
      if (pending) {
        pending.value = value as string;
        pending.waiters.push({ resolve, reject });
      } else {
        this.pendingWrites.set(key, { value: value as string, waiters: [{ resolve, reject }] });
      }
      this.schedule();
    });
  }

  /** After the current turn: everything asked for meanwhile goes in one batch each way. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const writes = this.pendingWrites;
      const reads = this.pendingReads;
      this.pendingWrites = new Map();
      this.pendingReads = new Map();
      // A read asked for before a write of the same key, in the same turn, answers the written
      // value: the two statements may run in either order on SQLite's threads.
      for (const [key, waiters] of reads) {
        const written = writes.get(key);
        if (!written) continue;
        for (const waiter of waiters) waiter.resolve(written.value);
        reads.delete(key);
      }
      if (writes.size > 0) void this.write(writes);
      if (reads.size > 0) void this.read(reads);
    });
  }

  private async write(writes: Map<string, { value: string; waiters: Waiter<void>[] }>): Promise<void> {
    const entries = [...writes];
    for (let i = 0; i < entries.length; i += WRITE_ROWS) {
      const chunk = entries.slice(i, i + WRITE_ROWS);
      try {
        await this.query(
          `INSERT INTO ${this.opts.table} (key, value) VALUES ${chunk.map(() => '(?, ?)').join(', ')} ON CONFLICT(key) DO UPDATE SET value=excluded.value`,
          ...chunk.flatMap(([key, { value }]) => [key, value]),
        );
        for (const [, { waiters }] of chunk) for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const [, { waiters }] of chunk) for (const waiter of waiters) waiter.reject(error);
      }
    }
  }

  private async read(reads: Map<string, Waiter<string | undefined>[]>): Promise<void> {
    const keys = [...reads.keys()];
    for (let i = 0; i < keys.length; i += READ_KEYS) {
      const chunk = keys.slice(i, i + READ_KEYS);
      try {
        const rows = (await this.query(`SELECT key, value FROM ${this.opts.table} WHERE key IN (SELECT value FROM json_each(?))`, JSON.stringify(chunk))) as { key: string; value: string }[];
        const found = new Map(rows.map((row) => [row.key, row.value]));
        for (const key of chunk) for (const waiter of reads.get(key)!) waiter.resolve(found.get(key));
      } catch (error) {
        for (const key of chunk) for (const waiter of reads.get(key)!) waiter.reject(error);
      }
    }
  }
}
