/**
 * docs/install.md (issue 40): every `oas ...` line of its `sh` blocks runs as written, by bash,
 * with `oas` on the PATH, in a folder whose `oas.config.json` points every engine at the loopback
 * fakes (the page's "from any directory": the configuration of the current directory is read).
 * `oas serve` is started, answers, and is stopped. Its `npm` lines are the set-up commands that
 * .ci/run and tests/install.test.ts run; the page shows exactly those.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const PAGE = readFileSync(new URL('../../docs/install.md', import.meta.url), 'utf8');

/** The lines of the page's `sh` blocks, comments and blank lines left out. */
export function shLines(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
    .flatMap((match) => match[1]!.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

const lines = shLines(PAGE);

test('the page\'s sh blocks hold oas commands and, besides them, only the set-up commands CI runs', () => {
  assert.deepEqual(lines.filter((line) => !line.startsWith('oas ')), ['npm install -g ./oas-*.tgz', 'npm ci && npm start', 'npm test']);
  assert.ok(lines.filter((line) => line.startsWith('oas ')).length >= 4);
});

describe('every oas command of docs/install.md, from a directory of its own', () => {
  let upstreams: Upstreams;
  let cwd: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    upstreams = await startUpstreams();
    // `oas serve` as the page shows it, on any free port rather than 8080.
    cwd = configFor(upstreams, { port: 0 }).dir;
    const shims = tempDir('oas-install-docs-bin-');
    writeFileSync(join(shims, 'oas'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, 'oas'), 0o755);
    env = { PATH: `${shims}:${process.env.PATH ?? ''}`, HOME: cwd, ...tmpEnv() };
  });
  after(() => upstreams.close());

  for (const line of lines.filter((command) => command.startsWith('oas ') && command !== 'oas serve')) {
    test(line, async () => {
      const run = await runProcess('bash', ['-c', line], { cwd, env });
      assert.equal(run.code, 0, `${line}:\n${run.stdout}\n${run.stderr}`);
      assert.notEqual(run.stdout, '', 'it prints its answer');
    });
  }

  test('oas serve', { skip: lines.includes('oas serve') ? false : 'not on the page' }, async () => {
    const child = killAtExit(spawn('bash', ['-c', 'exec oas serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d;
        const match = /^oas listening on (http:\/\/127\.0\.0\.1:\d+) /m.exec(output);
        if (match) resolve(match[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`oas serve exited with ${code}:\n${output}`)));
    });
    try {
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
    } finally {
      const exit = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exit;
    }
  });
});
