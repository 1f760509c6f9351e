/**
 * The terminal layouts as a user sees them: `oas analyze` (one block per observable, verdict
 * first) and `oas engines`, run as subprocesses at COLUMNS=80 and 200 and off a terminal without
 * COLUMNS (100 columns), against the loopback fakes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { outputWidth, wrapWords, breakObservable } from '../src/cli/table.js';
import { loadCatalog } from '../src/engine/catalog.js';
import * as abuseipdbFake from './fakes/abuseipdb.js';
import type { FakeHandler } from './fakes/http.js';
import { intelRoutes } from './fakes/intel.js';
import * as vtFake from './fakes/virustotal.js';
import { runOas, noStack, type Run } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOR = '185.220.101.1';
const LONG_URL = `https://very-long-host-name.example.org/${'segment/'.repeat(25)}login?user=someone&token=abcdef0123456789`;
/** 14 observables of every kind, one URL longer than the widest terminal tested. */
const ALERT = [
  `Alert: ${TOR.replace(/\./g, '[.]')} beaconed to hxxps://www[.]example[.]com/login and ${LONG_URL.replace('https', 'hxxps')}`,
  'other hosts: 8.8.8.8, 1.1.1.1, 9.9.9.9, 2606:4700:4700::1111, example[.]com, www.example.com, cyberbro.net, no-such-host.example.net',
  'dropper 44d88612fea8a8f36de82e1278abb02f / 275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f, sender user[at]example[.]com',
].join('\n');

const VERDICTS = ['malicious', 'suspicious', 'clean', 'unknown'];
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/;
/** The line under an observable that earlier analyses held (issue 38): every run after the first has one per block. */
const SEEN = /^ {12}seen (once, on \d{4}-\d\d-\d\d, |\d+ times since \d{4}-\d\d-\d\d, last )(malicious|suspicious|clean|unknown)$/;

let upstreams: Upstreams;
let config: ReturnType<typeof configFor>;
const cwd = tempDir('oas-layout-');
const oas = (args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> =>
  runOas(cwd, [...args, '--config', config.file], { env, ...(input === undefined ? {} : { input }) });

before(async () => {
  upstreams = await startUpstreams();
  // ipapi flags one address as a Tor exit (suspicious); VirusTotal and AbuseIPDB answer with a key.
  const ipapi = intelRoutes()['POST /ipapi'] as FakeHandler;
  upstreams.intel.route('POST /ipapi', async (req) => {
    const answer = (await ipapi(req)) as { json: Record<string, unknown> };
    return (JSON.parse(req.body) as { q: string }).q === TOR ? { ...answer, json: { ...answer.json, is_tor: true } } : answer;
  });
  for (const [key, route] of Object.entries({ ...vtFake.fakeRoutes(), ...abuseipdbFake.fakeRoutes() })) upstreams.intel.route(key, route);
  config = configFor(upstreams, {
    engines: {
      provider_24: { ...vtFake.fakeSettings(upstreams.intel.url), api_key: 'test-key' },
      provider_03: { ...abuseipdbFake.fakeSettings(upstreams.intel.url), api_key: 'test-key' },
    },
  });
});
after(() => upstreams.close());

interface Block {
  verdict: string;
  /** The observable's lines joined back (the text after the verdict column). */
  head: string;
  lines: string[];
  /** Its "seen ..." line, when earlier analyses held it. */
  seen: string[];
}

/** The observables' blocks (verdict first), and the footer's lines (the marking's line above them left out). */
function parse(stdout: string): { blocks: Block[]; footer: string[] } {
  const parts = stdout.trimEnd().split('\n\n');
  if (parts[0]?.startsWith('TLP:')) parts.shift();
  const footer = parts.pop()!.split('\n');
  const blocks = parts.map((part) => {
    const lines = part.split('\n');
    const verdict = lines[0]!.split(' ')[0]!;
    // The observable starts after the verdict column and goes on on the lines indented as far.
    const column = lines[0]!.length - lines[0]!.slice(verdict.length).trimStart().length;
    const own = [lines[0]!, ...lines.slice(1).filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith(' '.repeat(column)) && !SEEN.test(x)))];
    // What earlier analyses said of it is a line of its own, set apart (`seen`); the rest as before.
    return { verdict, head: own.map((l) => l.slice(column)).join(''), lines: lines.filter((l) => !SEEN.test(l)), seen: lines.filter((l) => SEEN.test(l)) };
  });
  return { blocks, footer };
}

async function observablesOf(text: string): Promise<{ observable: string; type: string; reversed_ip?: string }[]> {
  const run = await oas(['analyze', '--json'], {}, text);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as { observable: string; type: string; reversed_ip?: string }[];
}

describe('oas analyze: one block per observable, within the width', () => {
  let observables: Awaited<ReturnType<typeof observablesOf>>;
  before(async () => {
    observables = await observablesOf(ALERT);
  });

  test('the alert holds 14 observables, one of them longer than 200 characters', () => {
    assert.equal(observables.length, 14, observables.map((o) => o.observable).join('\n'));
    assert.ok(observables.some((o) => o.observable === LONG_URL));
    assert.ok(LONG_URL.length > 200);
  });

  for (const [name, env, width] of [
    ['COLUMNS=80', { COLUMNS: '80' }, 80],
    ['COLUMNS=200', { COLUMNS: '200' }, 200],
    ['off a terminal, without COLUMNS: 100', {}, 100],
  ] as const) {
    test(`${name}: no line wider, every observable whole with its type, verdict first, service names, reversed IPs`, async () => {
      const run = await oas(['analyze'], env, ALERT);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      noStack(run.stdout);
      assert.doesNotMatch(run.stdout, ANSI, 'no colour off a terminal');
      const lines = run.stdout.trimEnd().split('\n');
      assert.equal(lines[0], 'TLP:AMBER · PAP:GREEN', 'the marking first (the defaults)');
      for (const line of lines) assert.ok([...line].length <= width, `${[...line].length} > ${width}: ${line}`);
      assert.ok(lines.length < observables.length * 8, `compact: ${lines.length} lines`);

      const { blocks, footer } = parse(run.stdout);
      assert.equal(blocks.length, observables.length, 'one block per observable');
      blocks.forEach((block, i) => {
        const expected = observables[i]!;
        assert.ok(VERDICTS.includes(block.verdict), `the verdict first: ${block.lines[0]}`);
        assert.ok(block.head.startsWith(expected.observable), `whole:\n${block.lines.join('\n')}`);
        assert.ok(block.head.slice(expected.observable.length).trimStart().startsWith(expected.type), `then its type:\n${block.lines.join('\n')}`);
        if (expected.reversed_ip) assert.ok(block.head.includes(`reversed IP ${expected.reversed_ip}`), `reversed IP shown:\n${block.lines.join('\n')}`);
        // The --json run before this one held every observable: one line says so, under its head.
        assert.equal(block.seen.length, 1, `seen before:\n${block.lines.join('\n')}`);
      });
      assert.ok(observables.filter((o) => o.reversed_ip).length >= 3, 'domains resolved');

      // Engines by service name: the default engines run by id, the table says ipapi.
      assert.doesNotMatch(run.stdout, /provider_11/);
      const tor = blocks.find((b) => b.head.startsWith(`${TOR}  `))!;
      assert.equal(tor.verdict, 'suspicious');
      assert.match(tor.lines[1]!, /^ {2}- ipapi: .*Tor/, 'its reason right under it');
      assert.ok(tor.lines.some((l) => /^ {2}ipapi +AS\d+ /.test(l)), tor.lines.join('\n'));
      assert.ok(tor.lines.some((l) => /^ {2}reverse_dns +/.test(l)));
      const md5 = blocks.find((b) => b.head.startsWith('44d88612fea8a8f36de82e1278abb02f'))!;
      assert.deepEqual(md5.lines.slice(1), ['  no selected engine applies to MD5']);

      assert.match(footer[0]!, /^Verdicts: 0 malicious, 1 suspicious, 0 clean, 13 unknown$/);
      assert.match(footer.slice(1).join(' · '), /^14 observable\(s\), 3 engine\(s\)(, \d+ failed lookup\(s\))? · analysis [0-9a-f-]{36}$/);
    });
  }

  test('typed names stay as typed (an id, an alias); reasons name the engines the same way', async () => {
    const run = await oas(['analyze', '--engines', 'provider_11,virustotal,abuseipdb', TOR, 'example.com'], { COLUMNS: '80' });
    assert.equal(run.code, 0, run.stderr);
    const { blocks } = parse(run.stdout);
    const [tor, domain] = blocks;
    assert.equal(tor!.verdict, 'malicious');
    assert.deepEqual(tor!.lines.slice(1, 4).map((l) => l.split(':')[0]), ['  - virustotal', '  - abuseipdb', '  - provider_11'], 'most severe first');
    assert.ok(tor!.lines.some((l) => /^ {2}provider_11 +AS\d+/.test(l)));
    assert.ok(tor!.lines.some((l) => /^ {2}virustotal +\d+\/\d+ malicious/.test(l)));
    assert.ok(tor!.lines.some((l) => /^ {2}abuseipdb +risk 87/.test(l)));
    // A summary longer than the line wraps under itself, in the summary column.
    const at = tor!.lines.findIndex((l) => l.startsWith('  abuseipdb '));
    const column = tor!.lines[at]!.indexOf('risk 87');
    assert.match(tor!.lines[at + 1]!, new RegExp(`^ {${column}}\\S`), tor!.lines.join('\n'));
    assert.match(domain!.head, /^example\.com {2}FQDN · reversed IP 93\.184\.215\.14$/);
    for (const line of run.stdout.split('\n')) assert.ok(line.length <= 80, line);
  });
});

describe('oas engines', () => {
  test('fits 80 columns and 100 off a terminal, every engine listed; --wide shows every column', async () => {
    const ids = (await loadCatalog()).engines.map((e) => e.id);
    for (const [env, width] of [[{ COLUMNS: '80' }, 80], [{}, 100]] as const) {
      const run = await oas(['engines'], env);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trimEnd().split('\n');
      for (const line of lines) assert.ok([...line].length <= width, `${[...line].length} > ${width}: ${line}`);
      assert.match(lines[0]!, /^Engine +Service +Types +Configured$/);
      const listed = lines.slice(1).map((l) => l.split(' ')[0]!).filter((id) => /^[a-z][a-z0-9_]+$/.test(id));
      assert.deepEqual(listed.filter((id) => ids.includes(id)), ids, 'every engine, in order');
      assert.match(run.stdout, /^provider_11 \* +ipapi +IP \(\+ reversed IP\) +yes$/m);
      assert.match(run.stdout, /^provider_24 +virustotal +IP, domain, URL,( hash)? +yes$/m, 'configured with its key');
      assert.match(run.stdout, /^\* default, \+ beyond the spec/m);
      // Never over the width, counted in bytes too (an ASCII legend).
      for (const line of lines) assert.ok(Buffer.byteLength(line) <= width, `${Buffer.byteLength(line)} bytes > ${width}: ${line}`);
    }
    const wide = await oas(['engines', '--wide'], { COLUMNS: '80' });
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /│ Engine +│ Service +│ Tags +│ Types +│ Credentials +│ Configured +│/);
    assert.ok(wide.stdout.split('\n').some((l) => l.length > 150), '--wide is as wide as it takes');
  });

  test('at the narrowest width (40) one block per engine, never over the width', async () => {
    const ids = (await loadCatalog()).engines.map((e) => e.id);
    for (const columns of ['40', '12']) {
      const run = await oas(['engines'], { COLUMNS: columns });
      assert.equal(run.code, 0, run.stderr);
      for (const line of run.stdout.trimEnd().split('\n')) assert.ok(Buffer.byteLength(line) <= 40, `${Buffer.byteLength(line)} > 40: ${line}`);
      const listed = run.stdout.split('\n').filter((l) => /^[a-z]/.test(l)).map((l) => l.split(' ')[0]!);
      assert.deepEqual(listed.filter((id) => ids.includes(id)), ids, 'every engine, in order');
      assert.match(run.stdout, /^provider_11 \* \(ipapi\)\n {2}IP \(\+ reversed IP\)\n {2}configured: yes$/m);
    }
  });

  test('narrow: the Service column is dropped before anything is cut', async () => {
    const run = await oas(['engines'], { COLUMNS: '50' });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Engine +Types +Configured$/m);
    for (const line of run.stdout.trimEnd().split('\n')) assert.ok([...line].length <= 50, line);
  });
});

describe('the width and the wrapping', () => {
  test('COLUMNS, else the terminal\'s width, else 100; never under 40', () => {
    assert.equal(outputWidth(undefined, {}), 100);
    assert.equal(outputWidth(120, {}), 120);
    assert.equal(outputWidth(120, { COLUMNS: '90' }), 90);
    assert.equal(outputWidth(undefined, { COLUMNS: '200' }), 200);
    assert.equal(outputWidth(undefined, { COLUMNS: 'wide' }), 100);
    assert.equal(outputWidth(0, { COLUMNS: '0' }), 100);
    assert.equal(outputWidth(undefined, { COLUMNS: '12' }), 40);
  });

  test('words wrap at spaces, a word longer than the line is cut, nothing is lost', () => {
    const text = `alpha beta ${'x'.repeat(30)} gamma`;
    const lines = wrapWords(text, 20, '  - ', '    ');
    assert.deepEqual(lines, ['  - alpha beta', `    ${'x'.repeat(16)}`, `    ${'x'.repeat(14)}`, '    gamma']);
    assert.deepEqual(breakObservable(LONG_URL, 68).join(''), LONG_URL);
    assert.ok(breakObservable(LONG_URL, 68).slice(0, -1).every((p) => /[/&]$/.test(p)), 'broken after a slash or an ampersand');
  });
});
