/**
 * Issue 35: a file read off the caller's thread (src/files/read-off-thread.ts) gives what
 * `readFileObservables` gives, its FileReadError as the same class with the same fields; a read
 * past `timeoutMs` or over `maxMemoryMb` is stopped with a FileReadError saying so, its process
 * gone when the promise settles; and the caller's event loop keeps running timers all along
 * (counted with an interval, never timed).
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileObservables } from '../src/files/read.js';
import { liveFileReads, readFileOffThread } from '../src/files/read-off-thread.js';
import { FileReadError } from '../src/files/types.js';
import * as corpus from './helpers/corpus-docs.js';

let bigPdf: Uint8Array;

before(async () => {
  bigPdf = await corpus.pdfOfPages(200);
});

/** The FileReadError `promise` rejects with. */
async function readError(promise: Promise<unknown>): Promise<FileReadError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FileReadError, `a FileReadError, not ${String(error)}`);
    assert.ok(!error.message.includes('\n'), `one line: ${error.message}`);
    return error;
  }
  assert.fail('the read did not fail');
}

/** Resolves once `count` turns of a 1 ms interval have run on this thread. */
function ticks(count: number): { done: Promise<void>; stop(): void; seen(): number } {
  let seen = 0;
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    timer = setInterval(() => {
      if (++seen >= count) resolve();
    }, 1);
  });
  return { done, stop: () => clearInterval(timer), seen: () => seen };
}

describe('readFileOffThread', () => {
  test('gives what readFileObservables gives, options included; the caller keeps its bytes', async () => {
    const bytes = corpus.CSV_QUOTED.slice();
    const here = await readFileObservables(bytes, 'iocs.csv', { columns: ['note'] });
    const there = await readFileOffThread(bytes, 'iocs.csv', { columns: ['note'], timeoutMs: 60_000 });
    assert.deepEqual(there, here);
    assert.deepEqual(bytes, corpus.CSV_QUOTED);
    assert.equal(liveFileReads(), 0);
  });

  test("a reader's FileReadError comes back as the same class with the same fields", async () => {
    const here = await readError(readFileObservables(corpus.encryptedPdf(), 'secret.pdf'));
    const there = await readError(readFileOffThread(corpus.encryptedPdf(), 'secret.pdf', { timeoutMs: 60_000 }));
    assert.equal(there.name, 'FileReadError');
    assert.equal(there.fileName, 'secret.pdf');
    assert.equal(there.problem, here.problem);
    assert.equal(there.message, here.message);
    assert.equal(liveFileReads(), 0);
  });

  test('past timeoutMs: a FileReadError naming file_parse_timeout_ms, and the reading process is gone', async () => {
    const error = await readError(readFileOffThread(bigPdf, 'report.pdf', { timeoutMs: 1 }));
    assert.equal(error.fileName, 'report.pdf');
    assert.equal(error.problem, 'took longer than file_parse_timeout_ms (1 ms) to read: the file may be malformed or too complex');
    assert.equal(liveFileReads(), 0);
  });

  test("the caller's event loop runs its timers while a 200-page PDF is read", async () => {
    let settled = false;
    const counter = ticks(3);
    const reading = readFileOffThread(bigPdf, 'report.pdf', { timeoutMs: 600_000 }).finally(() => {
      settled = true;
    });
    assert.equal(liveFileReads(), 1);
    await counter.done;
    // Three turns of the loop came while the file was still being read.
    assert.equal(settled, false, 'the read ended before the loop turned: it held the thread');
    const result = await reading;
    counter.stop();
    assert.ok(counter.seen() >= 3);
    assert.equal(result.file.kind, 'pdf');
    assert.ok(result.observables.some((o) => o.value === 'c2-199.malware-report.com' && o.found_in[0] === 'report.pdf page 200'));
    assert.equal(liveFileReads(), 0);
  });

  test('a PDF stream inflating past maxMemoryMb: a FileReadError, and this process goes on', async () => {
    const bomb = await corpus.flateBombPdf(384);
    const error = await readError(readFileOffThread(bomb, 'bomb.pdf', { timeoutMs: 600_000, maxMemoryMb: 96 }));
    assert.equal(error.problem, 'needs more memory than oas allows to read a file (a zip bomb?)');
    assert.equal(liveFileReads(), 0);
  });

  test('a heap past maxMemoryMb (many small objects): a FileReadError, and this process goes on', async () => {
    const error = await readError(readFileOffThread(corpus.manyObjectsJson(3_000_000), 'objects.json', { timeoutMs: 600_000, maxMemoryMb: 64 }));
    assert.equal(error.fileName, 'objects.json');
    assert.equal(error.problem, 'needs more memory than oas allows to read a file (a zip bomb?)');
    assert.equal(liveFileReads(), 0);
    // Still here, and reading.
    const after = await readFileOffThread(corpus.SIEM_ALERT, 'alert.json', { timeoutMs: 60_000 });
    assert.equal(after.file.kind, 'json');
  });
});
