/**
 * Loaded with `node --import <this file>` into the oas processes the benchmark starts (never into
 * the start-up measurements). At exit it appends one JSON line to $BENCH_STATS_FILE: the process's
 * peak RSS (KiB, `process.resourceUsage().maxRSS`) and its CPU time (µs, user and system).
 * Nothing else: no output on stdout or stderr, no timer, no handle kept open.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_STATS_FILE;
if (file) {
  process.on('exit', (code) => {
    const usage = process.resourceUsage();
    appendFileSync(file, `${JSON.stringify({ pid: process.pid, code, maxRssKiB: usage.maxRSS, userUs: usage.userCPUTime, systemUs: usage.systemCPUTime })}\n`);
  });
}
