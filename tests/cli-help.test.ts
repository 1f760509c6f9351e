/**
 * Help that answers a newcomer's first questions: `oas analyze --help` lists which engines apply
 * to which observable type (service names, from the catalog, loaded for that help only) and shows
 * examples; an unknown engine names the closest one (`did you mean urlscan?`) and lists ids and
 * aliases, from the CLI (exit 2) and the API (400).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { UnknownEngineError } from '../src/engine/catalog.js';
import { appOnUpstreams } from './helpers/app.js';
import { noStack, runOas, runProcess, type Run } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { moduleRecorder } from './helpers/module-log.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('oas-help-');
const recorder = moduleRecorder(dir);
let runs = 0;
/** `oas args` in a directory without a configuration file, and the modules it loaded. */
async function oas(args: string[], env: Record<string, string> = {}): Promise<Run & { modules: string[] }> {
  const log = join(dir, `modules-${++runs}.log`);
  const run = await runOas(dir, args, { nodeArgs: recorder.nodeArgs, env: { ...recorder.env(log), XDG_CACHE_HOME: join(dir, 'cache'), ...env } });
  return { ...run, modules: recorder.read(log) };
}

/** The engines listed for a type: the text after its label, up to the next label. */
function enginesFor(help: string, label: string): string {
  const section = help.slice(help.indexOf('Engines per observable type'));
  const match = new RegExp(`^ {2}${label} +([^]*?)(?=^ {2}\\S|^\\S|(?![^]))`, 'm').exec(section);
  assert.ok(match, `${label} is listed:\n${section}`);
  return match[1]!.replace(/\s+/g, ' ');
}

const engineModules = (modules: string[]) => modules.filter((m) => /\/dist\/engines\/[^/]+\.js$/.test(m));
const helpModule = (modules: string[]) => modules.filter((m) => /\/dist\/src\/(cli\/help|app)\.js$/.test(m));

describe('oas analyze --help', () => {
  test('lists which engines apply to which observable type, by service name, and shows examples', async () => {
    const run = await oas(['analyze', '--help']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const help = run.stdout;
    assert.match(help, /Engines per observable type \(main catalog; \* = default engine/);
    const ipv4 = enginesFor(help, 'IPv4');
    for (const name of ['ipapi*', 'reverse_dns*', 'virustotal', 'abuseipdb', 'shodan']) assert.ok(ipv4.split(', ').includes(name), `IPv4: ${name} in ${ipv4}`);
    assert.doesNotMatch(ipv4, /provider_\d+/, 'service names, not ids');
    const fqdn = enginesFor(help, 'FQDN');
    assert.match(fqdn, /rdap_whois\*/);
    assert.match(fqdn, /and on the IP it resolves to: .*ipapi\*/, 'IP engines that run on the resolved address');
    assert.ok(!fqdn.split('and on the IP')[0]!.includes('ipapi'), 'ipapi is not a domain engine itself');
    const hashes = enginesFor(help, 'MD5, SHA1, SHA256');
    assert.match(hashes, /virustotal/);
    assert.doesNotMatch(hashes, /ipapi|rdap_whois/);
    const email = enginesFor(help, 'Email');
    assert.match(email, /hudsonrock/);
    assert.doesNotMatch(email, /virustotal|ipapi/);
    assert.match(help, /^Examples:\n {2}\$ oas analyze 8\.8\.8\.8 example\.com/m);
    assert.match(help, /-q, --quiet/);
    assert.match(help, /--no-color/);
    for (const line of help.split('\n')) assert.ok(line.length <= 80, `fits 80 columns: ${line}`);
    assert.ok(engineModules(run.modules).length > 0 || run.modules.some((m) => m.endsWith('/dist/src/engine/declarations.js')), 'the catalog was read');

    const again = await oas(['help', 'analyze']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, help, '`oas help analyze` is the same');
  });

  test('the catalog asked for (--catalog older); a broken configuration still gives the help', async () => {
    const older = await oas(['analyze', '--catalog', 'older', '--help']);
    assert.equal(older.code, 0, older.stderr);
    assert.match(older.stdout, /\(older catalog;/);
    assert.doesNotMatch(enginesFor(older.stdout, 'IPv4'), /bad_asn/, 'bad_asn is not in the older catalog');
    assert.match(enginesFor((await oas(['analyze', '--help'])).stdout, 'IPv4'), /bad_asn/);
    const broken = await oas(['analyze', '--help', '--config', join(dir, 'missing.json')]);
    assert.equal(broken.code, 0, broken.stderr);
    assert.match(broken.stdout, /Engines per observable type/);
  });

  test('help piped into a reader that goes away: exit 0, not a word on stderr (no EPIPE stack trace)', async () => {
    for (const args of ['analyze --help', '--help', 'engines --help', 'help analyze', '--version', '-V']) {
      // `true` exits at once without reading: every write of the help meets a closed pipe.
      const run = await runProcess('bash', ['-c', `"${process.execPath}" "${BIN}" ${args} | true; echo "exit \${PIPESTATUS[0]}" >&2`], { cwd: dir, env: { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') } });
      assert.equal(run.stderr, 'exit 0\n', `oas ${args}`);
    }
  });

  test('other commands and their help pay nothing for it', async () => {
    for (const args of [['--help'], ['engines', '--help'], ['serve', '--help'], ['analyze', '--bogus']]) {
      const run = await oas(args);
      assert.deepEqual(helpModule(run.modules), [], `${args.join(' ')}: no help module, no app`);
      assert.deepEqual(engineModules(run.modules), [], `${args.join(' ')}: no engine module`);
      assert.doesNotMatch(run.stdout, /Engines per observable type/, args.join(' '));
    }
    // After "--", "--help" is text to analyze (no observable in it: exit 2), not a help request.
    const text = await oas(['analyze', '--', '--help']);
    assert.equal(text.code, 2, text.stderr);
    assert.ok(!text.modules.some((m) => m.endsWith('/dist/src/cli/help.js')), 'no help module');
  });
});

describe('an unknown engine names the closest match', () => {
  const served = appOnUpstreams();

  test('the message: did you mean, then every engine by service name and id', () => {
    const error = new UnknownEngineError(['urlscn'], ['provider_23', 'reverse_dns'], [{ id: 'provider_23', service: 'urlscan' }, { id: 'reverse_dns', service: 'reverse_dns' }]);
    assert.equal(error.message, 'unknown engine: urlscn; did you mean urlscan? (valid engines: reverse_dns, urlscan (provider_23))');
    assert.deepEqual(error.suggestions, { urlscn: 'urlscan' });
    const none = new UnknownEngineError(['zzzzzzzz'], ['provider_23'], [{ id: 'provider_23', service: 'urlscan' }]);
    assert.equal(none.message, 'unknown engine: zzzzzzzz (valid engines: urlscan (provider_23))');
  });

  test('CLI: exit 2, one line on stderr, nothing run', async () => {
    const run = await oas(['analyze', '8.8.8.8', '--engines', 'urlscn', '--config', served.config.file]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^oas: unknown engine: urlscn; did you mean urlscan\? \(valid engines: .*\breverse_dns\b.*\burlscan \(provider_23\).*\)\n$/);
    noStack(run.stderr);
    const two = await oas(['analyze', '8.8.8.8', '--engines', 'virustotl,provider_1,reverse_dns', '--config', served.config.file]);
    assert.equal(two.code, 2);
    assert.match(two.stderr, /unknown engines: virustotl, provider_1; did you mean virustotal \(for virustotl\), provider_01 \(for provider_1\)\?/);
  });

  test('API: 400 with the same message', async () => {
    const res = await fetch(`${served.server.url}/api/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns', 'urlscn'] }),
    });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    assert.match(error, /^unknown engine: urlscn; did you mean urlscan\? \(valid engines: .*urlscan \(provider_23\)/);
  });
});
