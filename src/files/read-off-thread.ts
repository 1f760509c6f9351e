/**
 * A file read off the caller's thread, within a time and a memory bound (issue 35): what every
 * surface calls (through src/files/upload.ts). `readFileObservables` runs in a child process of
 * its own (src/files/read-worker.ts), one per file, at a lower priority, so that `oas serve` keeps
 * answering while a 200-page PDF is read; a file that never ends parsing, or swells (a zip bomb, a
 * PDF stream inflating to GBs), is stopped by ending that process: no reader has to be written to
 * be interruptible, and nothing of it is left behind.
 *
 * A process, not a worker thread: a worker's `resourceLimits` do not contain every way out of
 * memory. V8 gives a worker at its heap limit 16 MB more to end cleanly; one allocation larger than
 * that (a big array or string, which a file decides) aborts the whole process instead. A JSON file
 * of 24 MB (`[{},{},...]`) read in a worker limited to 512 MB took `oas serve` down with it (exit
 * 134); in a child process only the child ends, and that is reported as the file's error. A child
 * costs a Node start (~50 ms) on top of the reader's modules, which a worker loads as well.
 *
 * Memory is bounded three ways: the child's heap (`--max-old-space-size`), its memory outside the
 * heap (watched by the child), and on Linux its resident size, watched from here (a child stuck in
 * one long allocation cannot watch itself).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ReadJob, ReadReply } from './read-worker.js';
import { FileReadError, type FileExtraction, type ReadOptions } from './types.js';

const WORKER_PATH = fileURLToPath(new URL('./read-worker.js', import.meta.url));
/** The memory a read may use by default (MB): a 25 MiB file and what its reader makes of it. */
export const DEFAULT_MAX_MEMORY_MB = 512;
/** How often the child's resident size is looked at (ms; Linux). */
const RSS_WATCH_MS = 100;
/** A Node process with the readers loaded, before it reads anything (MB, generous). */
const BASE_RSS_MB = 256;
/** The end of the child's standard error kept (V8 writes why it aborted there). */
const STDERR_TAIL = 4096;

export interface OffThreadReadOptions extends ReadOptions {
  /** Setting file_parse_timeout_ms: the read is stopped after this long (ms). */
  timeoutMs: number;
  /** Most memory the read may use (MB): its heap, and as much again outside it (default 512). */
  maxMemoryMb?: number | undefined;
  /** Read at a lower priority than the caller (a server, which keeps answering requests meanwhile). */
  background?: boolean | undefined;
}

const OUT_OF_MEMORY = 'needs more memory than oas allows to read a file (a zip bomb?)';

let live = 0;

/** Files being read now (their child processes are running). */
export function liveFileReads(): number {
  return live;
}

/**
 * The file's observables, read by a child process: FileReadError (naming the file) when it cannot
 * be read, takes longer than `timeoutMs`, or needs more memory than `maxMemoryMb`. The caller's
 * event loop is free all along (the bytes are sent, and the answer received, asynchronously); when
 * the promise settles, the child is gone. `bytes` is copied to the child, left as it is here.
 */
export async function readFileOffThread(bytes: Uint8Array, name: string, options: OffThreadReadOptions): Promise<FileExtraction> {
  const { timeoutMs, maxMemoryMb = DEFAULT_MAX_MEMORY_MB, background = false, ...readOptions } = options;
  let child: ChildProcess;
  try {
    child = fork(WORKER_PATH, [], {
      // Its own flags only: the caller's (--inspect, a test runner's) are not for it.
      execArgv: [`--max-old-space-size=${maxMemoryMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
  } catch (error) {
    throw new FileReadError(name, `could not be read (no process to read it: ${messageOf(error)})`);
  }
  live++;
  try {
    const outcome = await new Promise<{ extraction: FileExtraction } | { error: FileReadError }>((resolve) => {
      let settled = false;
      let stderr = '';
      const settle = (value: { extraction: FileExtraction } | { error: FileReadError }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(rssWatch);
        resolve(value);
      };
      const fail = (problem: string) => settle({ error: new FileReadError(name, problem) });

      const timer = setTimeout(
        () => fail(`took longer than file_parse_timeout_ms (${timeoutMs} ms) to read: the file may be malformed or too complex`),
        timeoutMs,
      );
      const maxRssKb = (2 * maxMemoryMb + BASE_RSS_MB) * 1024;
      const rssWatch = setInterval(() => {
        void residentKb(child.pid).then((kb) => {
          if (kb !== undefined && kb > maxRssKb) fail(OUT_OF_MEMORY);
        });
      }, RSS_WATCH_MS);

      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL);
      });
      child.on('message', (reply: ReadReply) => {
        if ('extraction' in reply) settle({ extraction: reply.extraction });
        else if ('readError' in reply) settle({ error: new FileReadError(reply.readError.fileName, reply.readError.problem) });
        else if ('outOfMemory' in reply) fail(OUT_OF_MEMORY);
        else fail(`could not be read (${oneLine(reply.failed)})`);
      });
      child.on('error', (error) => fail(`could not be read (its process failed: ${oneLine(messageOf(error))})`));
      child.on('exit', (code, signal) => {
        // V8 out of heap aborts the process, saying so on standard error.
        if (signal === 'SIGABRT' || code === 134 || /heap out of memory|allocation failed/i.test(stderr)) fail(OUT_OF_MEMORY);
        else fail(`could not be read (its process stopped: ${signal ?? `exit code ${code}`})`);
      });

      const job: ReadJob = { bytes, name, options: readOptions, maxExternalBytes: maxMemoryMb * 1024 * 1024, background };
      child.send(job, (error) => {
        if (error) fail(`could not be read (not handed to its process: ${oneLine(messageOf(error))})`);
      });
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.extraction;
  } finally {
    await stop(child);
    live--;
  }
}

/** Ends the child (if it has not ended itself) and waits until it has. */
async function stop(child: ChildProcess): Promise<void> {
  // Never started (no pid: its 'error' said why), or already ended.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A process's resident size (kB), from /proc (Linux); undefined elsewhere or once it has ended. */
async function residentKb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
