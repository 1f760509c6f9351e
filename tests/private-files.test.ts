/**
 * Private by default (issue 21): under umask 022 the folders oas creates are 0700 and the files
 * in them 0600, for every command (the engine declarations cache included); an existing data
 * folder that other users can read gets one warning line naming it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './helpers/serve.js';

const root = mkdtempSync(join(tmpdir(), 'oas-private-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** `oas args` with HOME at `home`, under `umask 022`. */
function oasUnderUmask(home: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('/bin/sh', ['-c', `umask 022; exec ${quoted}`], { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Every folder and file under `dir`, with its permission bits. */
function modes(dir: string): [string, number, boolean][] {
  const out: [string, number, boolean][] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path);
    out.push([path, info.mode & 0o777, info.isDirectory()]);
    if (info.isDirectory()) out.push(...modes(path));
  }
  return out;
}

function assertPrivate(dir: string): void {
  const entries = modes(dir);
  assert.ok(entries.length > 0, `${dir} holds something`);
  for (const [path, mode, isDir] of entries) assert.equal(mode.toString(8), isDir ? '700' : '600', path);
}

// VirusTotal without a key answers "not configured" without any call: exit 1 (every engine failed),
// but the analysis is stored, so the data folder and its SQLite file are written.
const ANALYZE = ['analyze', 'evil.example.com', '--engines', 'virustotal', '--json'];
const commands: [string[], number, boolean][] = [[['--help'], 0, false], [['engines'], 0, true], [['engines', '--json'], 0, true], [ANALYZE, 1, true]];
for (const [args, code, writes] of commands) {
  test(`oas ${args.join(' ')} under umask 022: what it creates is 0700 (folders) and 0600 (files)`, async () => {
    const home = mkdtempSync(join(root, 'home-'));
    const run = await oasUnderUmask(home, args);
    assert.equal(run.code, code, run.stderr);
    assert.equal(run.stderr.includes('warning'), false, run.stderr);
    if (writes || existsSync(join(home, '.cache'))) assertPrivate(join(home, '.cache'));
  });
}

test('the SQLite file and its companions are 0600; a readable data folder is named once on stderr', async () => {
  const home = mkdtempSync(join(root, 'home-'));
    assert.equal((await oasUnderUmask(home, ANALYZE)).code, 1);
  const dataDir = join(home, '.cache', 'oas');
  assert.ok(readdirSync(dataDir).includes('oas.sqlite'));
  assertPrivate(dataDir);

  chmodSync(dataDir, 0o755);
  const again = await oasUnderUmask(home, ANALYZE);
  assert.equal(again.code, 1, again.stderr);
  const warnings = again.stderr.split('\n').filter((line) => line.startsWith('warning:'));
  assert.deepEqual(warnings, [`warning: data_dir ${dataDir} can be read by other users (mode 0755); to keep analyses private: chmod 700 ${dataDir}`]);
  // Left as the user set it: it may be shared on purpose.
  assert.equal((statSync(dataDir).mode & 0o777).toString(8), '755');
});
