/**
 * Extraction of large texts off the calling thread (issue 33). `extractObservables` on 1 MiB of
 * alert text takes 200-400 ms of CPU: on `oas serve`'s only thread, every poll, results read and
 * 400 waited behind it, for each such text in the queue. Texts of at least OFF_THREAD_MIN_CHARS
 * go to a small pool of worker threads (src/observables/extract-worker.ts); shorter ones, whose
 * extraction costs less than a trip to a worker, are extracted where they are asked for.
 *
 * The pool starts its workers on first use, one per free core (at least one, at most
 * MAX_WORKERS), queues texts beyond them in order, and keeps an idle worker for IDLE_MS. An idle
 * worker never keeps the process alive. A worker that fails (it could not start, or it died) is
 * replaced, and its text is extracted on the calling thread instead: an extraction always ends.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { extractObservables } from './extract.js';
import type { ExtractJob, ExtractReply } from './extract-worker.js';
import type { Observable } from './types.js';

/**
 * A text refused because the texts ahead of it would keep it waiting longer than the caller
 * accepts (`extract`'s `maxWaitMs`): `retryAfterMs` is that wait, estimated.
 */
export class ExtractionBusyError extends Error {
  override name = 'ExtractionBusyError';
  constructor(readonly retryAfterMs: number, readonly ahead: number) {
    super(`${ahead} large text${ahead === 1 ? ' is' : 's are'} being extracted before it (about ${Math.ceil(retryAfterMs / 1000)} s of work)`);
  }
}

/** Texts at least this long are extracted by a worker (16 KiB: ~5 ms of extraction). */
export const OFF_THREAD_MIN_CHARS = 16 * 1024;
const MAX_WORKERS = 4;
/** An idle worker is stopped after this long. */
const IDLE_MS = 60_000;
const WORKER_URL = new URL('./extract-worker.js', import.meta.url);
/** The cost of extraction before any is measured: 500 ms a MiB (ms per character). */
const INITIAL_MS_PER_CHAR = 500 / (1024 * 1024);

export interface ExtractionPoolOptions {
  /** Workers at most (default: the cores but one, 1 to MAX_WORKERS). */
  size?: number;
  /** The worker's module (tests give one of their own). */
  workerUrl?: URL;
  /** Given to each worker (tests). */
  workerData?: unknown;
  /** Texts shorter than this are extracted on the calling thread (default OFF_THREAD_MIN_CHARS). */
  minChars?: number;
}

export interface ExtractionStats {
  /** Texts extracted by a worker. */
  offThread: number;
  /** Texts extracted on the calling thread: short ones, and those of a worker that failed. */
  inThread: number;
  /** Texts waiting for a worker. */
  queued: number;
  /** Texts a worker is extracting now. */
  running: number;
  /** Texts refused for the wait ahead of them (ExtractionBusyError). */
  refused: number;
  /** The work queued and running, estimated from the extractions measured so far (ms). */
  backlogMs: number;
}

interface Task {
  job: ExtractJob;
  resolve(observables: Observable[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

export class ExtractionPool {
  readonly size: number;
  private readonly workerUrl: URL;
  private readonly workerData: unknown;
  private readonly minChars: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private nextId = 0;
  private closed = false;
  private readonly counts = { offThread: 0, inThread: 0, refused: 0 };
  /** Characters of the texts queued and running. */
  private backlogChars = 0;
  /** Measured cost of extraction (a moving average of the workers' replies). */
  private msPerChar = INITIAL_MS_PER_CHAR;

  constructor(options: ExtractionPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.size ?? Math.min(MAX_WORKERS, availableParallelism() - 1)));
    this.workerUrl = options.workerUrl ?? WORKER_URL;
    this.workerData = options.workerData;
    this.minChars = options.minChars ?? OFF_THREAD_MIN_CHARS;
  }

  /**
   * The observables of `text`, as `extractObservables` gives them. With `maxWaitMs`, a large text
   * that would wait longer than that for the texts ahead of it is refused at once
   * (ExtractionBusyError): what one request may queue is bounded.
   */
  extract(text: string, options: { maxWaitMs?: number } = {}): Promise<Observable[]> {
    if (text.length < this.minChars || this.closed) return Promise.resolve(this.inThread(text));
    const waitMs = this.backlogMs();
    if (options.maxWaitMs !== undefined && waitMs > options.maxWaitMs) {
      this.counts.refused++;
      return Promise.reject(new ExtractionBusyError(waitMs, this.queue.length + this.stats().running));
    }
    this.backlogChars += text.length;
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, text }, resolve, reject });
      this.pump();
    });
  }

  /** How long the texts queued and running take, estimated (ms): each worker takes its share. */
  backlogMs(): number {
    return (this.backlogChars * this.msPerChar) / this.size;
  }

  stats(): ExtractionStats {
    let running = 0;
    for (const slot of this.slots) if (slot.task) running++;
    return { ...this.counts, queued: this.queue.length, running, backlogMs: this.backlogMs() };
  }

  /** Stops the workers; texts queued or running are extracted on the calling thread. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots];
    this.slots.clear();
    for (const task of this.queue.splice(0)) this.fallBack(task);
    await Promise.all(slots.map(async (slot) => {
      clearTimeout(slot.idleTimer);
      const task = slot.task;
      slot.task = undefined;
      await slot.worker.terminate();
      if (task) this.fallBack(task);
    }));
  }

  private inThread(text: string): Observable[] {
    this.counts.inThread++;
    return extractObservables(text);
  }

  private fallBack(task: Task): void {
    this.backlogChars -= task.job.text.length;
    try {
      task.resolve(this.inThread(task.job.text));
    } catch (error) {
      task.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Hands queued texts to idle workers, starting workers up to `size`. */
  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      let slot: Slot | undefined;
      for (const candidate of this.slots) {
        if (!candidate.task) {
          slot = candidate;
          break;
        }
      }
      if (!slot) {
        if (this.slots.size >= this.size) return;
        slot = this.start();
        if (!slot) {
          // No worker could be made: the text is extracted here.
          this.fallBack(this.queue.shift()!);
          continue;
        }
      }
      const task = this.queue.shift()!;
      slot.task = task;
      clearTimeout(slot.idleTimer);
      slot.worker.ref();
      slot.worker.postMessage(task.job);
    }
  }

  private start(): Slot | undefined {
    let worker: Worker;
    try {
      worker = new Worker(this.workerUrl, { workerData: this.workerData });
    } catch {
      return undefined;
    }
    const slot: Slot = { worker, task: undefined, idleTimer: undefined };
    this.slots.add(slot);
    worker.on('message', (reply: ExtractReply) => {
      const task = slot.task;
      if (!task || task.job.id !== reply.id) return;
      slot.task = undefined;
      this.counts.offThread++;
      this.backlogChars -= task.job.text.length;
      if (task.job.text.length > 0) this.msPerChar += (reply.ms / task.job.text.length - this.msPerChar) * 0.25;
      if ('error' in reply) task.reject(new Error(reply.error));
      else task.resolve(reply.observables);
      this.idle(slot);
      this.pump();
    });
    const failed = () => {
      if (!this.slots.delete(slot)) return;
      clearTimeout(slot.idleTimer);
      const task = slot.task;
      slot.task = undefined;
      if (task) this.fallBack(task);
      this.pump();
    };
    worker.on('error', failed);
    worker.on('exit', failed);
    return slot;
  }

  /** An idle worker: it no longer keeps the process alive, and stops after IDLE_MS. */
  private idle(slot: Slot): void {
    slot.worker.unref();
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.task || !this.slots.delete(slot)) return;
      void slot.worker.terminate();
    }, IDLE_MS);
    slot.idleTimer.unref();
  }
}

let shared: ExtractionPool | undefined;

/** The process's pool, made on first use. */
export function sharedExtractionPool(): ExtractionPool {
  return (shared ??= new ExtractionPool());
}

/** `extractObservables(text)`, by a worker of the process's pool when the text is large. */
export function extractObservablesOffThread(text: string): Promise<Observable[]> {
  return sharedExtractionPool().extract(text);
}
