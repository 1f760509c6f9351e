/**
 * The worker thread of src/observables/extract-pool.ts: extracts the observables of each text it
 * is sent and posts them back, one message per text.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { extractObservables } from './extract.js';

// Below the server's thread: on Linux the nice value is a thread's own, and 0 names this thread.
// On a machine short of cores, the requests' thread gets the CPU first and extraction what is left
// (the pool's estimates of the work ahead, measured here, follow).
try {
  setPriority(0, 10);
} catch {
  // not permitted, or not this platform: the same priority as the rest
}

export interface ExtractJob {
  id: number;
  text: string;
}

/** The observables (or the error), and how long the extraction took (ms). */
export type ExtractReply = ({ observables: ReturnType<typeof extractObservables> } | { error: string }) & { id: number; ms: number };

parentPort?.on('message', (job: ExtractJob) => {
  const started = performance.now();
  let reply: ExtractReply;
  try {
    const observables = extractObservables(job.text);
    reply = { id: job.id, observables, ms: performance.now() - started };
  } catch (error) {
    reply = { id: job.id, error: error instanceof Error ? error.message : String(error), ms: performance.now() - started };
  }
  parentPort!.postMessage(reply);
});
