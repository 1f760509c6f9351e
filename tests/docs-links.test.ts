/**
 * The docs hold together (issue 40): every relative link of README.md and of the pages of docs/
 * reaches a file that exists, and a link's `#anchor` is a heading of its target as GitHub names it
 * (lower case, punctuation but `-` and `_` dropped, spaces as `-`, a repeated heading `-1`, `-2`...).
 * The README stays a front door of at most about 300 lines, and every page of docs/ is linked from
 * the index, docs/README.md. Links inside code blocks are code, not links.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The page's lines outside its fenced code blocks. */
function prose(markdown: string): string[] {
  let fence = false;
  return markdown.split('\n').filter((line) => {
    if (/^ *```/.test(line)) {
      fence = !fence;
      return false;
    }
    return !fence;
  });
}

/** A heading's anchor as GitHub makes it. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, repeated ones numbered as GitHub numbers them. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** The relative links (and images) of a page's prose: `[text](target)`. */
function links(markdown: string): string[] {
  return prose(markdown)
    .flatMap((line) => [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

test('the slugs are GitHub\'s', () => {
  assert.equal(slug('`oas` on your PATH'), 'oas-on-your-path');
  assert.equal(slug('oas — Observable Analysis Service'), 'oas--observable-analysis-service');
  assert.equal(slug('Sending results to MISP, OpenCTI and TheHive'), 'sending-results-to-misp-opencti-and-thehive');
  assert.equal(slug('What comes in: hostile answers stay inert'), 'what-comes-in-hostile-answers-stay-inert');
  assert.equal(slug('`max_tlp`'), 'max_tlp');
  assert.deepEqual([...anchors('# A\n```sh\n# not a heading\n```\n## A\n')], ['a', 'a-1']);
});

test('every relative link between the README and the pages of docs/ resolves, anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const target of links(read(page))) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      checked++;
      if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
        broken.push(`${page}: ${target} (no file ${file})`);
        continue;
      }
      if (anchor === undefined || statSync(join(ROOT, file)).isDirectory()) continue;
      if (!file.endsWith('.md')) broken.push(`${page}: ${target} (an anchor into ${file}, which is no page)`);
      else if (!anchors(read(file)).has(anchor)) broken.push(`${page}: ${target} (no heading "#${anchor}" in ${file})`);
    }
  }
  assert.ok(checked > 60, `links checked: ${checked}`);
  assert.deepEqual(broken, []);
});

test('the README is the front door: at most about 300 lines, linking the index', () => {
  const readme = read('README.md');
  const lines = readme.split('\n').length;
  assert.ok(lines <= 320, `README.md has ${lines} lines`);
  assert.ok(links(readme).includes('docs/README.md'), 'README.md links docs/README.md');
});

test('the index, docs/README.md, links every page of docs/', () => {
  const linked = new Set(links(read('docs/README.md')).map((target) => normalize(join('docs', target.split('#')[0]!))));
  const unlinked = PAGES.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md' && !linked.has(page));
  assert.deepEqual(unlinked, [], 'pages of docs/ the index does not link');
});
