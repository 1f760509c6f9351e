/**
 * The lockfile is the truth (issue 21): on a clean clone, the README's install command (`npm ci`)
 * works and leaves `git status` empty, and `npm link` puts a working `oas` on the PATH. Slow (it
 * builds the SQLite binding and the TypeScript of a second copy), so it runs once, in CI
 * (`CI=true`, as .ci/run is run), or when OAS_INSTALL_TEST=1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const wanted = process.env.CI === 'true' || process.env.OAS_INSTALL_TEST === '1';

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 15 * 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

test('a clean clone: npm ci works and leaves git status empty; npm link gives a working oas', { skip: wanted ? false : 'slow: runs in CI (CI=true) or with OAS_INSTALL_TEST=1', timeout: 20 * 60_000 }, () => {
  const clone = join(tempDir('oas-install-'), 'oas');
  run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], ROOT);
  run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], clone);
  assert.equal(run('git', ['status', '--porcelain'], clone), '', 'npm ci leaves the clone as it was');

  // `npm link` into a prefix of the test's own, so nothing outside the temporary folder changes.
  const prefix = tempDir('oas-link-');
  run('npm', ['link', '--no-audit', '--no-fund'], clone, { npm_config_prefix: prefix });
  const version = run('oas', ['--version'], clone, { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` });
  assert.match(version, /^\d+\.\d+\.\d+\n$/);
  assert.equal(run('git', ['status', '--porcelain'], clone), '', 'npm link leaves the clone as it was too');
});
