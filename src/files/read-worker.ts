/**
 * The child process of src/files/read-off-thread.ts: reads one file (`readFileObservables`), sends
 * back what it holds or why it cannot be read, and ends. One process per file: a file that hangs
 * or swells is stopped by ending its process, which nothing else shares (why a process and not a
 * worker thread: see read-off-thread.ts).
 *
 * Its heap is bounded by `--max-old-space-size` (given by the parent); what the heap does not count
 * (the ArrayBuffers a reader allocates: pdf.js inflating a compressed stream keeps every byte of
 * it, and a PDF of 1 MB can inflate to GBs) is watched here, every WATCH_MS, against the same bound.
 */
import { setPriority } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { readFileObservables } from './read.js';
import { FileReadError, type FileExtraction, type ReadOptions } from './types.js';

/** How often the memory outside the heap is looked at (ms). */
const WATCH_MS = 50;

export interface ReadJob {
  bytes: Uint8Array;
  name: string;
  options: ReadOptions;
  /** Most bytes of ArrayBuffers and other memory outside the heap the read may hold. */
  maxExternalBytes: number;
  /** Read at a lower priority than the caller's (a server's files). */
  background: boolean;
}

export type ReadReply =
  | { extraction: FileExtraction }
  | { readError: { fileName: string; problem: string } }
  | { outOfMemory: true }
  | { failed: string };

async function read(job: ReadJob): Promise<ReadReply> {
  try {
    return { extraction: await readFileObservables(job.bytes, job.name, job.options) };
  } catch (error) {
    if (error instanceof FileReadError) return { readError: { fileName: error.fileName, problem: error.problem } };
    if (error instanceof RangeError && /allocation failed|invalid (typed )?array( buffer)? length/i.test(error.message)) return { outOfMemory: true };
    return { failed: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

function reply(message: ReadReply): void {
  process.send?.(message, () => process.exit(0));
}

if (process.send) {
  // The parent is gone (it ended, or stopped listening): nothing is waiting for the answer.
  process.on('disconnect', () => process.exit(0));
  process.once('message', (job: ReadJob) => {
    // For a server: below the caller, which answers requests meanwhile (not permitted or not this
    // platform: as it is). A command waiting for the file alone keeps its own priority.
    if (job.background) {
      try {
        setPriority(10);
      } catch {
        // the same priority
      }
    }
    const watch = setInterval(() => {
      if (getHeapStatistics().external_memory > job.maxExternalBytes) {
        clearInterval(watch);
        reply({ outOfMemory: true });
      }
    }, WATCH_MS);
    void read(job).then((message) => {
      clearInterval(watch);
      reply(message);
    });
  });
}
