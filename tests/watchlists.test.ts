/**
 * Watchlists (issue 36) in this process, on the SQLite file and the server's timer, on a clock that
 * moves only when the test says so (no test waits for real hours): the baseline fires nothing; two
 * runs with PhishTank's answer changed in between fire exactly one `watchlist.changed`, naming the
 * observable and the change; a run without change fires nothing; a run missed while the server was
 * down runs once at start; each run is an ordinary analysis marked with the watchlist's name,
 * started by its owner, asking the engines again. Also: what a watchlist may be (`every` at least
 * 5m, its name, its body), and what counts as a change (verdict, new reason, an engine's first data).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { InputError } from '../src/analysis/request.js';
import { observableChanges, type ObservableState } from '../src/automation/watchlist-compare.js';
import type { WatchlistService } from '../src/automation/watchlist-service.js';
import { startWatchlistTimer } from '../src/automation/watchlist-timer.js';
import { parseEvery, parseWatchlistInput } from '../src/automation/watchlist.js';
import { closeWatchlists, watchlistStoreOf, watchlistsOf } from '../src/automation/watchlists-app.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { HOUR, phishTank, recordingSink, steppedClock, waitFor } from './helpers/watchlists.js';

describe('what a watchlist may be', () => {
  test('every: 30m, 6h, 1d, 1h30m; under 5m or past 90d refused, naming the rule', () => {
    assert.equal(parseEvery('30m'), 30 * 60_000);
    assert.equal(parseEvery('6h'), 6 * HOUR);
    assert.equal(parseEvery('1d'), 24 * HOUR);
    assert.equal(parseEvery('1h30m'), 90 * 60_000);
    assert.equal(parseEvery('5m'), 5 * 60_000);
    assert.throws(() => parseEvery('4m'), (error: Error) => error instanceof InputError && /at least 5m/.test(error.message));
    assert.throws(() => parseEvery('299s'), /at least 5m/);
    assert.throws(() => parseEvery('91d'), /at most 90d/);
    for (const bad of ['', '6', 'h', '6 hours', '-5m', '1.5h']) assert.throws(() => parseEvery(bad), /interval such as 30m, 6h or 1d/, bad);
  });

  test('the body: name, text and every required, names short and plain, no field of the server', () => {
    assert.deepEqual(parseWatchlistInput({ name: 'soc.phish-1', text: 'example.com', every: '6h' }), { name: 'soc.phish-1', text: 'example.com', every: '6h' });
    const refusals: [unknown, RegExp][] = [
      [[], /JSON object/],
      [{ text: 'x', every: '6h' }, /"name" is required/],
      [{ name: 'a', every: '6h' }, /"text" is required/],
      [{ name: 'a', text: 'x' }, /"every" is required/],
      [{ name: '../etc', text: 'x', every: '6h' }, /"name" must be 1 to 64 letters/],
      [{ name: 'a'.repeat(65), text: 'x', every: '6h' }, /"name" must be/],
      [{ name: 'a', text: '  ', every: '6h' }, /"text" must not be empty/],
      [{ name: 'a', text: 'x', every: '1m' }, /at least 5m/],
      [{ name: 'a', text: 'x', every: '6h', engines: [] }, /at least one engine/],
      [{ name: 'a', text: 'x', every: '6h', engines: 'vt' }, /"engines" must be an array/],
      [{ name: 'a', text: 'x', every: '6h', owner: 'mallory' }, /unknown field "owner"/],
      [{ name: 'a', text: 'x', every: '6h', runs: [] }, /unknown field "runs"/],
    ];
    for (const [body, message] of refusals) assert.throws(() => parseWatchlistInput(body), (error: Error) => error instanceof InputError && message.test(error.message), JSON.stringify(body));
  });

  test('a change: the verdict, a new reason (with the engine\'s reason before), an engine\'s first data; a failure says nothing', () => {
    const state = (verdict: string, reasons: string[], engines: [string, 'data' | 'empty' | 'unknown', string][]): ObservableState => ({
      observable: 'evil.example', type: 'FQDN', verdict, reasons, engines: new Map(engines.map(([key, status, summary]) => [key, { status, summary }])),
    });
    const before = state('clean', ['provider_17: not in PhishTank'], [['provider_17', 'data', 'not in database'], ['urlscan', 'empty', 'no data'], ['threatfox', 'unknown', '']]);
    const after = state('malicious', ['provider_17: verified phish', 'threatfox: IOC of Lumma'], [['provider_17', 'data', 'in database'], ['urlscan', 'data', '1 scan'], ['threatfox', 'data', '1 IOC']]);
    assert.deepEqual(observableChanges(before, after), [
      { observable: 'evil.example', type: 'FQDN', kind: 'verdict', before: 'clean', after: 'malicious' },
      { observable: 'evil.example', type: 'FQDN', kind: 'reason', engine: 'provider_17', before: 'provider_17: not in PhishTank', after: 'provider_17: verified phish' },
      { observable: 'evil.example', type: 'FQDN', kind: 'reason', engine: 'threatfox', before: null, after: 'threatfox: IOC of Lumma' },
      // threatfox failed before: its data now is no "first data" (a failure is not "no data").
      { observable: 'evil.example', type: 'FQDN', kind: 'data', engine: 'urlscan', before: 'no data', after: '1 scan' },
    ]);
    assert.deepEqual(observableChanges(after, after), []);
  });
});

describe('watchlists on a virtual clock (SQLite, the server\'s timer)', { timeout: 60_000 }, () => {
  let upstreams: Upstreams;
  let app: App;
  let service: WatchlistService;
  const clock = steppedClock(Date.parse('2026-11-02T08:00:00.000Z'));
  const sink = recordingSink();

  before(async () => {
    upstreams = await startUpstreams();
    phishTank(upstreams.intel, false);
    app = await createApp({ file: configFor(upstreams).file, env: {} }, { role: 'server' });
    service = watchlistsOf(app, { clock, events: sink, pollMs: { first: 5, max: 50 } });
  });
  after(async () => {
    await closeWatchlists(app);
    await app?.close();
    await upstreams?.close();
  });

  /** Real-time waiting until the timer sleeps (it has done what was due). */
  const asleep = async () => {
    for (let i = 0; clock.sleepers() === 0; i++) {
      if (i > 2000) throw new Error('the timer never slept');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const analysesOf = async (name: string) => {
    const rows = await app.storage!.analysesTable.query(`SELECT json_extract(value, '$.value.id') AS id FROM analyses WHERE json_extract(value, '$.value.watchlist') = ?`, name) as { id: string }[];
    return rows.map((row) => row.id);
  };

  test('the baseline fires nothing; a change between two runs fires exactly one watchlist.changed naming the observable and the change', async () => {
    const name = 'phish-watch';
    const { watchlist, baseline } = await service.add({ name, text: 'Reported: hxxps://login.evil-bank[.]example/verify', engines: ['provider_17'], every: '6h' }, 'alice');
    assert.equal(watchlist.owner, 'alice');
    assert.equal(watchlist.tlp, 'AMBER');
    assert.equal(watchlist.pap, 'GREEN');
    const first = await baseline!.finished;
    assert.equal(first?.status, 'done');
    assert.equal(first?.baseline, true);
    assert.equal(first?.trigger, 'added');
    assert.deepEqual(first?.changes, []);
    assert.equal(sink.events.length, 0, 'the baseline fires nothing');

    // Each run is an ordinary analysis: in the history, marked, started by the owner, no cache.
    const header = await app.analyses.get(first!.analysis_id!);
    assert.equal(header?.watchlist, name);
    assert.equal(header?.started_by, 'alice');
    assert.equal(header?.ignore_cache, true);
    assert.equal(header?.origin, 'server');

    const timer = startWatchlistTimer(service, { clock });
    try {
      await asleep();
      assert.equal((await service.get(name))!.runs.length, 1, 'not due before its interval');
      phishTank(upstreams.intel, true);
      await clock.advance(6 * HOUR);
      const second = await waitFor(watchlistStoreOf(app), name, (w) => w.runs.length === 2 && w.runs[0]!.status === 'done', 'the second run');
      const run = second.runs[0]!;
      assert.equal(run.trigger, 'schedule');
      assert.equal(run.baseline, false);
      assert.equal(run.scheduled_for, new Date(Date.parse(first!.at) + 6 * HOUR).toISOString());
      assert.equal(sink.events.length, 1, 'exactly one event');
      const [event] = sink.events;
      assert.equal(event!.type, 'watchlist.changed');
      assert.deepEqual(event!.analysis, { id: run.analysis_id, tlp: 'AMBER' });
      assert.equal(event!.data.watchlist, name);
      assert.equal(event!.data.analysis_id, run.analysis_id);
      assert.equal(event!.data.link, `/results/${run.analysis_id}`);
      assert.equal(event!.data.previous_analysis_id, first!.analysis_id);
      const changes = event!.data.changes as typeof run.changes;
      assert.deepEqual(changes, run.changes);
      assert.deepEqual(changes.find((c) => c.kind === 'verdict'), { observable: 'https://login.evil-bank.example/verify', type: 'URL', kind: 'verdict', before: 'clean', after: 'malicious' });
      assert.ok(changes.some((c) => c.kind === 'reason' && c.engine === 'provider_17' && /verified phish/.test(c.after)), JSON.stringify(changes));

      // One more interval, PhishTank saying the same: a run, no change, no event.
      await asleep();
      await clock.advance(6 * HOUR);
      const third = await waitFor(watchlistStoreOf(app), name, (w) => w.runs.length === 3 && w.runs[0]!.status === 'done', 'the third run');
      assert.deepEqual(third.runs[0]!.changes, []);
      assert.equal(sink.events.length, 1);
      assert.deepEqual((await analysesOf(name)).sort(), third.runs.map((r) => r.analysis_id).sort(), 'one analysis per run, each marked');
    } finally {
      await timer.stop();
      await service.idle();
      await service.remove(name);
    }
  });

  test('a run missed while the server was down runs once at start, then every interval', async () => {
    const name = 'missed';
    phishTank(upstreams.intel, false);
    const { baseline } = await service.add({ name, text: 'login-verify-bank.com', engines: ['provider_17'], every: '1h' }, 'bob');
    await baseline!.finished;
    // Down for five intervals: nothing runs without a server.
    await clock.advance(5 * HOUR);
    const timer = startWatchlistTimer(service, { clock });
    try {
      await waitFor(watchlistStoreOf(app), name, (w) => w.runs.length === 2 && w.runs[0]!.status === 'done', 'the run at start');
      await asleep();
      await service.idle();
      let watchlist = (await service.get(name))!;
      assert.equal(watchlist.runs.length, 2, 'once, not once per interval missed');
      assert.equal(watchlist.runs[0]!.trigger, 'schedule');
      assert.equal((await analysesOf(name)).length, 2);
      // Half an interval later: nothing; a whole one after the run at start: the next.
      await clock.advance(HOUR / 2);
      await asleep();
      assert.equal((await service.get(name))!.runs.length, 2);
      await clock.advance(HOUR / 2);
      watchlist = await waitFor(watchlistStoreOf(app), name, (w) => w.runs.length === 3 && w.runs[0]!.status === 'done', 'the next interval\'s run');
      assert.equal((await analysesOf(name)).length, 3);
    } finally {
      await timer.stop();
      await service.idle();
      await service.remove(name);
    }
  });

  test('a name is taken once; an unknown engine or no observable is refused before anything is stored', async () => {
    const { baseline } = await service.add({ name: 'once', text: 'example.com', engines: ['provider_17'], every: '1d' }, 'carol');
    await baseline!.finished;
    await assert.rejects(service.add({ name: 'once', text: 'example.org', every: '1d' }, 'carol'), /a watchlist named once exists already/);
    await assert.rejects(service.add({ name: 'unknown-engine', text: 'example.org', engines: ['no_such_engine'], every: '1d' }, 'carol'), (error: Error) => error instanceof InputError && /no_such_engine/.test(error.message));
    await assert.rejects(service.add({ name: 'nothing', text: 'just words', every: '1d' }, 'carol'), /no observable found/);
    await assert.rejects(service.add({ name: 'marking', text: 'example.org', every: '1d', tlp: 'PURPLE' }, 'carol'), InputError);
    assert.deepEqual((await service.list()).map((w) => w.name), ['once']);
    assert.equal(await service.remove('once'), true);
    assert.equal(await service.remove('once'), false);
  });
});
