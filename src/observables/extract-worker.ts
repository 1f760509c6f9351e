/**
 * The worker thread of src/observables/extract-pool.ts: extracts the observables of each text it
 * is sent and posts them back, one message per text.
 */
import { parentPort } from 'node:worker_threads';
import { extractObservables } from './extract.js';

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
