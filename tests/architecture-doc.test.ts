/**
 * docs/ARCHITECTURE.md names files and folders: every one of them exists (a path in backquotes
 * or a link; `<id>` stands for any engine and is left out), and it names every folder of src/.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');

/** The paths the page names: backquoted words with a slash or a file extension, and link targets. */
function namedPaths(markdown: string): string[] {
  const quoted = [...markdown.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!);
  const linked = [...markdown.matchAll(/\]\(([^)\s#]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/i.test(href));
  return [...new Set([...quoted, ...linked])]
    .filter((word) => /\//.test(word) || /\.(ts|md|cjs|json)$/.test(word))
    .filter((word) => !word.includes('<') && !word.startsWith('/'));
}

test('every path docs/ARCHITECTURE.md names exists', () => {
  const paths = namedPaths(DOC);
  assert.ok(paths.length > 30, `only ${paths.length} paths found`);
  const missing = paths.filter((path) => !existsSync(join(ROOT, path)));
  assert.deepEqual(missing, [], `named in docs/ARCHITECTURE.md but missing: ${missing.join(', ')}`);
});

test('docs/ARCHITECTURE.md has a line for every folder of src/', () => {
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `src/${e.name}/`);
  const named = new Set(namedPaths(DOC));
  const absent = folders.filter((folder) => !named.has(folder) && ![...named].some((p) => p.startsWith(folder)));
  assert.deepEqual(absent, [], `folders of src/ the page does not place: ${absent.join(', ')}`);
  for (const folder of ['engines/', 'web/src/', 'src/app.ts']) assert.ok(named.has(folder), `${folder} not placed`);
});
