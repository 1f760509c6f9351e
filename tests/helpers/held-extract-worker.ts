/**
 * An extraction worker for tests/server-load.test.ts: src/observables/extract-worker.ts's job,
 * held before each text until the test lets it go. `workerData` is an Int32Array on shared memory:
 * [0] is how many texts the worker may extract (the test adds and notifies), [1] how many it has
 * started (it adds as each arrives, for the test to wait on).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractObservables } from '../../src/observables/extract.js';
import type { ExtractJob, ExtractReply } from '../../src/observables/extract-worker.js';

const gate = workerData as Int32Array;
let done = 0;

parentPort!.on('message', (job: ExtractJob) => {
  Atomics.add(gate, 1, 1);
  Atomics.notify(gate, 1);
  while (Atomics.load(gate, 0) <= done) Atomics.wait(gate, 0, Atomics.load(gate, 0));
  done++;
  const started = performance.now();
  const reply: ExtractReply = { id: job.id, observables: extractObservables(job.text), ms: performance.now() - started };
  parentPort!.postMessage(reply);
});
