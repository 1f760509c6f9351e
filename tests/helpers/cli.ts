/** The `oas` binary as a subprocess, with a clean environment and a working directory of its own. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN } from './serve.js';
import { tmpEnv } from './temp.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` in `cwd` with exactly the environment `env`, to its end; standard input is
 * `input` when given, else closed (ignored).
 */
export function runProcess(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/**
 * Runs `oas args` in `cwd` (HOME too) with only PATH, TMPDIR (when set: `npm test` checks the
 * temporary directory is left empty) and `env`; standard input is `input` or empty.
 * `nodeArgs` go to node before the executable (e.g. `--import` of a module-recording hook).
 */
export function runOas(cwd: string, args: string[], options: { input?: string; env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<Run> {
  return runProcess(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv(), ...options.env },
    input: options.input ?? '',
  });
}

/** No stack trace in a command's output. */
export const noStack = (text: string): void => assert.doesNotMatch(text, /\n\s+at .+:\d+:\d+/, 'no stack trace');
