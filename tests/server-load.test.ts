/**
 * The server answers under load (issue 33), without asserting any timing: the work one request
 * may cost is bounded, and what is costly runs where it does not hold up the HTTP surface.
 * - A list of 10 000 engine names, mostly unknown, gets its 400 naming at most MAX_UNKNOWN_NAMED
 *   of them (with their did-you-mean) and how many more there are: the suggestions, an edit
 *   distance to every name of the catalog each, are computed for those few only.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InputError, MAX_UNKNOWN_NAMED, prepareAnalysis } from '../src/analysis/request.js';
import { loadCatalog } from '../src/engine/catalog.js';
import { appOnUpstreams } from './helpers/app.js';

const served = appOnUpstreams();

async function post(body: unknown): Promise<Response> {
  return fetch(`${served.server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('a list of 10 000 engine names', () => {
  test('mostly unknown: 400 naming at most MAX_UNKNOWN_NAMED of them, and how many more', async () => {
    // Near misses of real names: each would get its own "did you mean" if one were computed per name.
    const engines = Array.from({ length: 10_000 }, (_, i) => (i % 5 === 0 ? 'reverse_dns' : `reverse_dn${i}`));
    const res = await post({ text: 'example.com', engines });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    const unknown = new Set(engines.filter((name) => name !== 'reverse_dns'));
    const shown = [...unknown].slice(0, MAX_UNKNOWN_NAMED);
    assert.ok(error.startsWith(`unknown engines: ${shown.join(', ')} and ${unknown.size - MAX_UNKNOWN_NAMED} more; did you mean `), error.slice(0, 300));
    assert.equal([...error.matchAll(/\(for reverse_dn\d+\)/g)].length, MAX_UNKNOWN_NAMED);
    assert.match(error, /\(valid engines: .*reverse_dns/);
    assert.ok(!error.includes(`reverse_dn${MAX_UNKNOWN_NAMED * 2}`), 'an unknown name past the first ones is named');
  });

  test('valid names repeated: each engine selected once', async () => {
    const catalog = await loadCatalog();
    const engines = Array.from({ length: 10_000 }, (_, i) => ['reverse_dns', ' reverse_dns ', 'public_dns'][i % 3]!);
    const prepared = prepareAnalysis(catalog, {}, { text: 'example.com', engines });
    assert.deepEqual(prepared.selections.map((s) => s.key), ['reverse_dns', 'public_dns']);
  });

  test('as many unknown names as may be named: each named, as before', async () => {
    const catalog = await loadCatalog();
    const engines = Array.from({ length: MAX_UNKNOWN_NAMED }, (_, i) => `reverse_dn${i}`);
    assert.throws(() => prepareAnalysis(catalog, {}, { text: 'example.com', engines }), (error: Error) => {
      assert.ok(error instanceof InputError);
      assert.ok(error.message.startsWith(`unknown engines: ${engines.join(', ')}; did you mean `), error.message.slice(0, 300));
      assert.ok(!error.message.includes(' more;'));
      return true;
    });
  });
});
