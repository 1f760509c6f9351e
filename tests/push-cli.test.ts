/**
 * Issue 37 from a terminal: `oas push misp|opencti|thehive ID` and `oas analyze --push TARGET` as
 * subprocesses, against loopback MISP, OpenCTI and TheHive fakes that check every request as the
 * platforms do. What each command prints (one line, or `--json`), its exit code (0 pushed, 2
 * refused before anything was sent, 1 the platform failed), what the platforms hold afterwards
 * (the observables at or above the threshold, once, however often pushed), the audit line
 * `results_pushed` (counts, never an observable), and no key of the three anywhere in what the
 * commands print or the audit trail holds.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { startMispPushFake, type MispPushFake } from './fakes/misp-push.js';
import { startOpenCtiPush, type OpenCtiPushFake } from './fakes/opencti-push.js';
import { DEFAULT_KEY as THEHIVE_KEY, startFakeTheHive, type FakeTheHive } from './fakes/thehive.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

/** What the intel fake knows: a score per observable, judged by the custom engine `intel`. */
const SCORES: Record<string, number> = { 'evil.example.com': 90, '45.33.32.156': 50, '8.8.8.8': 10 };
const TEXT = 'c2 at evil[.]example[.]com, scanner 45.33.32.156, resolver 8.8.8.8';

let upstreams: Upstreams;
let intel: FakeHttpServer;
let misp: MispPushFake;
let opencti: OpenCtiPushFake;
let thehive: FakeTheHive;
let config: { file: string };
const cwd = tempDir('oas-push-cli-');
const audit = join(cwd, 'audit.jsonl');
/** Every run's output, for the leak scan at the end. */
const printed: string[] = [];

async function oas(...args: string[]): Promise<Run> {
  const run = await runOas(cwd, [...args, '--config', config.file], { env: { OAS_PUSH_THEHIVE_API_KEY: THEHIVE_KEY } });
  printed.push(run.stdout, run.stderr);
  noStack(run.stderr);
  return run;
}

/** A new analysis of `text` with the intel engine; its id. */
async function analysis(text = TEXT, ...args: string[]): Promise<string> {
  const run = await oas('analyze', text, '-e', 'intel', ...args);
  assert.equal(run.code, 0, run.stderr);
  const id = /analysis ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
  assert.ok(id, run.stdout);
  return id;
}

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({
    'GET /intel/*': (req) => {
      const score = SCORES[decodeURIComponent(req.path.slice('/intel/'.length))];
      return score === undefined ? { status: 404, json: { error: 'unknown' } } : { json: { score } };
    },
  });
  misp = await startMispPushFake();
  opencti = await startOpenCtiPush();
  thehive = await startFakeTheHive();
  config = configFor(upstreams, {
    audit_log: audit,
    custom_engines: {
      intel: {
        types: ['IPv4', 'FQDN', 'URL'],
        request: { url: `${intel.url}/intel/{value}` },
        fields: { score: '/score' },
        summary: 'score {score}',
        evidence: [
          { field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' },
          { field: 'score', op: '>=', value: 40, verdict: 'suspicious', reason: 'score {score}' },
          { field: 'score', op: 'exists', verdict: 'clean', reason: 'known, score {score}' },
        ],
      },
    },
    // MISP and TheHive as push targets of their own (TheHive's key from OAS_PUSH_THEHIVE_API_KEY,
    // and at most AMBER); OpenCTI through its engine's settings.
    push: { misp: { url: misp.url, api_key: misp.key }, thehive: { url: thehive.url, max_tlp: 'AMBER' } },
    engines: { provider_16: { base_url: opencti.url, api_key: opencti.token } },
  });
});

after(async () => {
  await Promise.all([upstreams?.close(), intel?.close(), misp?.close(), opencti?.close(), thehive?.close()]);
});

describe('oas push', () => {
  let id: string;

  test('MISP: an event of the suspicious and malicious observables, one line; pushed again, nothing added', async () => {
    id = await analysis();
    const first = await oas('push', 'misp', id);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^MISP event \d+ created: 2 attributes added .*\/events\/view\/\d+\)?\n$/);
    assert.equal(misp.events.length, 1);
    const attributes = misp.events[0]!.Attribute.filter((a) => a.type !== 'link' && a.type !== 'comment');
    assert.deepEqual(attributes.map((a) => [a.value, a.to_ids]).sort(), [['45.33.32.156', false], ['evil.example.com', true]]);
    const again = await oas('push', 'misp', id);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /0 attributes added, 2 already there/);
    assert.equal(misp.events.length, 1, 'still one event');
  });

  test('TheHive: --min-verdict malicious --json, an alert of the analysis', async () => {
    const run = await oas('push', 'thehive', id, '--min-verdict', 'malicious', '--json');
    assert.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.equal(answer['target'], 'thehive');
    assert.equal(answer['kind'], 'alert');
    assert.equal(answer['created'], true);
    assert.equal(answer['selected'], 1);
    assert.equal(thehive.alerts.length, 1);
    assert.equal(thehive.alerts[0]!.sourceRef, id);
    assert.deepEqual(thehive.alerts[0]!.observables.map((o) => [o.dataType, o.data, o.ioc]), [['fqdn', 'evil.example.com', true]]);
  });

  test('OpenCTI through the engine\'s settings: --all, every observable, an indicator for the malicious one', async () => {
    const run = await oas('push', 'opencti', id, '--all', '--json');
    assert.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.deepEqual([answer['kind'], answer['added'], answer['selected'], answer['indicators']], ['observables', 3, 3, 1]);
    assert.deepEqual(opencti.observables.map((o) => o.value).sort(), ['45.33.32.156', '8.8.8.8', 'evil.example.com']);
  });

  test('the team\'s own observables (TLP:RED) stay out of a target whose max_tlp is lower, and the line says so', async () => {
    const mixed = await analysis('evil[.]example[.]com and 10.1.2.3', '--tlp', 'GREEN');
    const run = await oas('push', 'thehive', mixed, '--all', '--json');
    assert.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.deepEqual([answer['selected'], answer['withheld']], [1, 1]);
    assert.match(String(answer['message']), /\(1 of the team's own observables withheld: TLP:RED is above the target's max_tlp\)$/);
    const alert = thehive.alerts.find((a) => a.sourceRef === mixed)!;
    assert.deepEqual(alert.observables.map((o) => o.data), ['evil.example.com']);
  });

  test('refused before anything is sent: exit 2, one line naming what to fix', async () => {
    const red = await analysis('evil[.]example[.]com', '--tlp', 'RED');
    const before = { misp: misp.events.length, thehive: thehive.alerts.length };
    const cases: [string[], RegExp][] = [
      [['push', 'splunk', id], /^oas: push: unknown push target "splunk": use misp, opencti, thehive\n$/],
      [['push', 'misp', id, '--case', '7'], /case_id \(--case\) is for TheHive/],
      [['push', 'opencti', id, '--event', '7'], /event_id \(--event\) is for MISP/],
      [['push', 'misp', id, '--min-verdict', 'bad'], /min_verdict "bad" is no verdict/],
      [['push', 'misp', '0b9b8f5e-0000-4000-8000-000000000000'], /analysis 0b9b8f5e-0000-4000-8000-000000000000 not found/],
      [['push', 'thehive', red], new RegExp(`analysis ${red} is TLP:RED, above what TheHive may receive \\(push\\.thehive\\.max_tlp is AMBER\\): nothing sent`)],
    ];
    for (const [args, message] of cases) {
      const run = await oas(...args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.split('\n').filter(Boolean).length, 1, 'one line');
      assert.equal(run.stdout, '');
    }
    assert.deepEqual({ misp: misp.events.length, thehive: thehive.alerts.length }, before, 'nothing sent');
    const bare = configFor(upstreams);
    const unconfigured = await runOas(cwd, ['push', 'misp', id, '--config', bare.file]);
    printed.push(unconfigured.stdout, unconfigured.stderr);
    assert.equal(unconfigured.code, 2);
    assert.match(unconfigured.stderr, /MISP is not configured as a push target: set push\.misp\.url and push\.misp\.api_key or OAS_PUSH_MISP_API_KEY, or configure the MISP engine/);
  });

  test('a platform that refuses: exit 1, one line naming the target, what failed and the key to check', async () => {
    const other = await analysis('evil[.]example[.]com');
    misp.role = 'read-only';
    try {
      const run = await oas('push', 'misp', other);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^oas: push: MISP at 127\.0\.0\.1:\d+: .*key refused: .*push\.misp\.api_key or OAS_PUSH_MISP_API_KEY.*\n$/);
    } finally {
      misp.role = 'admin';
    }
    opencti.readOnly = true;
    try {
      const run = await oas('push', 'opencti', other);
      assert.equal(run.code, 1, run.stderr);
      // The key in use is the OpenCTI engine's: the line says which setting to give the push instead.
      assert.match(run.stderr, /push\.opencti\.token or OAS_PUSH_OPENCTI_TOKEN \(the key in use is the OpenCTI engine's, engines\.provider_16\.api_key/);
    } finally {
      opencti.readOnly = false;
    }
  });

  test('oas analyze --push: the results as asked, then the push\'s line on standard error; a push that cannot happen stops it first', async () => {
    const run = await oas('analyze', 'evil[.]example[.]com 45.33.32.156', '-e', 'intel', '--json', '--push', 'thehive');
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout) as { observable: string }[];
    assert.deepEqual(results.map((r) => r.observable), ['evil.example.com', '45.33.32.156']);
    assert.match(run.stderr, /TheHive alert \S+ created: 2 observables added/);
    assert.equal(thehive.alerts.length, 3);
    const calls = intel.hits('GET /intel/').length;
    const refused = await oas('analyze', 'evil[.]example[.]com', '-e', 'intel', '--push', 'nowhere');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^oas: --push: unknown push target "nowhere"/);
    assert.equal(intel.hits('GET /intel/').length, calls, 'nothing analysed');
  });

  test('the audit trail: results_pushed with the target, the analysis and the counts, never an observable', () => {
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const pushes = lines.filter((line) => line['action'] === 'results_pushed');
    assert.ok(pushes.length >= 8, `${pushes.length} lines`);
    const first = pushes.find((line) => line['target'] === 'misp' && line['outcome'] === 'success')!;
    assert.deepEqual([first['client'], first['analysis_id'], first['kind'], first['created'], first['added'], first['selected']], ['cli', id, 'event', true, 2, 2]);
    assert.ok(pushes.some((line) => line['outcome'] === 'failure' && /key refused/.test(String(line['reason']))));
    const text = readFileSync(audit, 'utf8');
    for (const observable of Object.keys(SCORES)) assert.ok(!text.includes(observable), `no ${observable} in the audit trail`);
  });

  test('no key of the three in anything printed or written', () => {
    const everything = [...printed, readFileSync(audit, 'utf8')].join('\n');
    for (const key of [misp.key, opencti.token, THEHIVE_KEY]) assert.ok(!everything.includes(key), 'a key leaked');
  });
});
