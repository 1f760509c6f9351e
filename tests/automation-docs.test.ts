/**
 * Issue 36, the docs' "Automation" (docs/automation.md, issue 40): its webhook receiver, the JavaScript block of "Webhooks", runs as written
 * (only its port changed) with the `standardwebhooks` package, and verifies what oas sends:
 * `oas webhooks test URL` gets 204 and the receiver prints the ping; a body oas did not sign, or
 * signed with another secret, gets 401. The page's commands run in readme-examples.test.ts.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { freePort } from './helpers/redis.js';
import { killAtExit, tempDir } from './helpers/temp.js';

const PAGE = readFileSync(new URL('../../docs/automation.md', import.meta.url), 'utf8');
const SECRET = 'whsec_YXV0b21hdGlvbi1kb2NzLXJlY2VpdmVyLXNlY3JldA==';

/** The JavaScript block of the page's "Webhooks" section. */
function receiverOf(markdown: string): string {
  const start = markdown.indexOf('\n## Webhooks\n');
  assert.ok(start >= 0, 'docs/automation.md has a "Webhooks" section');
  const section = markdown.slice(start, markdown.indexOf('\n## ', start + 1));
  const block = /^```js\n([\s\S]*?)^```/m.exec(section)?.[1];
  assert.ok(block, 'the Webhooks section shows a receiver');
  return block;
}

describe('the webhook receiver of docs/automation.md', () => {
  let receiver: ChildProcess;
  let url: string;
  let printed = '';

  before(async () => {
    const code = receiverOf(PAGE);
    assert.match(code, /\.listen\(9000\)/);
    const port = await freePort();
    const dir = tempDir('oas-receiver-');
    // As a team installs it: `npm install standardwebhooks` beside the file (this checkout's copy).
    symlinkSync(fileURLToPath(new URL('../../node_modules', import.meta.url)), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'receiver.mjs'), code.replace('.listen(9000)', `.listen(${port}, '127.0.0.1')`));
    receiver = killAtExit(spawn(process.execPath, ['receiver.mjs'], { cwd: dir, env: { PATH: process.env.PATH ?? '', OAS_SOAR_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'pipe'] }));
    receiver.stdout!.on('data', (d: Buffer) => (printed += d));
    receiver.stderr!.on('data', (d: Buffer) => (printed += d));
    url = `http://127.0.0.1:${port}/hooks/oas`;
    // Listening once a request gets an answer.
    for (let i = 0; ; i++) {
      try {
        await fetch(url, { method: 'POST', body: '{}' });
        break;
      } catch (error) {
        if (i > 100) throw error;
        await new Promise((done) => setTimeout(done, 50));
      }
    }
  });

  after(() => {
    receiver?.kill('SIGKILL');
  });

  test('verifies oas\'s signed ping: oas webhooks test URL prints 204, the receiver the event', async () => {
    const ran = await runProcess(process.execPath, [BIN, 'webhooks', 'test', url, '--secret-env', 'OAS_SOAR_SECRET'], { env: { PATH: process.env.PATH ?? '', OAS_SOAR_SECRET: SECRET }, cwd: tempDir('oas-receiver-cwd-') });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /HTTP 204/);
    for (let i = 0; i < 100 && !printed.includes('ping'); i++) await new Promise((done) => setTimeout(done, 20));
    assert.match(printed, /^ping\b/m);
  });

  test('refuses what oas did not sign with its secret: 401, and oas webhooks test exits 1', async () => {
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"analysis.completed","timestamp":"2026-11-29T00:00:00Z","data":{}}' });
    assert.equal(unsigned.status, 401);
    const other = 'whsec_c29tZW9uZS1lbHNlcy1zZWNyZXQtMDEyMzQ1Njc4OQ==';
    const ran = await runProcess(process.execPath, [BIN, 'webhooks', 'test', url, '--secret-env', 'OTHER_SECRET'], { env: { PATH: process.env.PATH ?? '', OTHER_SECRET: other }, cwd: tempDir('oas-receiver-cwd-') });
    assert.equal(ran.code, 1, ran.stdout + ran.stderr);
    assert.match(ran.stdout + ran.stderr, /HTTP 401/);
    assert.ok(!(ran.stdout + ran.stderr).includes(other), 'the secret is never printed');
  });
});
