/**
 * `npm run bench`: 100 domains with reverse_dns, rdap_whois and public_dns, then 100 other domains
 * with every keyless engine, against loopback fakes that add a fixed latency to every answer.
 * Prints for each the wall time, the critical-path lower bound (perfect parallelism within the
 * concurrency settings), their ratio and the same analysis fully cached; then peak RSS and
 * extraction speed on 1 MB of text, and what the pages cost (live view, history over 2000
 * analyses). Not a test: nothing is asserted.
 */
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { createApp } from '../../src/app.js';
import { historyPage } from '../../src/analysis/history.js';
import { extractObservables } from '../../src/observables/extract.js';
import { analysisView } from '../../src/view/analysis-view.js';
import { configFor, type Upstreams } from '../helpers/upstreams.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 50);
const OBSERVABLES = Number(process.env.BENCH_OBSERVABLES ?? 100);

/** The headline measurement: the three backbone engines. */
const CORE = ['reverse_dns', 'rdap_whois', 'public_dns'];

const coreDomains = Array.from({ length: OBSERVABLES }, (_, i) => `site${i}.com`);
const keylessDomains = Array.from({ length: OBSERVABLES }, (_, i) => `web${i}.com`);

// The fakes run in a worker thread: their CPU time must not count against the analysis.
const fleet = new Worker(new URL('./fleet.js', import.meta.url), {
  workerData: { domains: [...coreDomains, ...keylessDomains, 'warmup.com'], latencyMs: LATENCY_MS },
});
const [settings] = (await once(fleet, 'message')) as [Upstreams['settings']];
const { file, dir } = configFor({ settings } as Upstreams);
const app = await createApp({ file, env: {} });
/** Every registered engine of the main catalog that needs no key. */
const KEYLESS = app.catalog.engines.filter((e) => app.catalog.isMember(e) && e.credentials.every((c) => c.required === false)).map((e) => e.id);

const run = async (text: string, engines: string[]) => {
  const started = performance.now();
  const record = await app.analyses.runToEnd({ text, engines });
  const ms = performance.now() - started;
  const failures = record.results.reduce((n, r) => n + Object.keys(r?.errors ?? {}).length, 0);
  return { ms, failures, record };
};

/**
 * Lower bound in round trips for domains only: every engine call costs one round trip; calls of
 * one engine run at most `concurrency` at a time, all calls at most `config.concurrency` at a time.
 * IP-only engines wait for the pivot's answer (1 round trip); rdap_whois downloads the bootstrap
 * once; bad_asn is a local lookup after its provider, plus one list download.
 */
function lowerBound(engines: string[]): number {
  let calls = 0;
  let bound = 0;
  for (const id of engines) {
    const engine = app.catalog.find(id)!;
    if (id === 'bad_asn') {
      bound = Math.max(bound, 3);
      continue;
    }
    const concurrency = app.runner.settingsFor(engine).concurrency;
    const before = (engine.reversedIp && !engine.types.includes('FQDN') ? 1 : 0) + (id === 'rdap_whois' ? 1 : 0);
    calls += OBSERVABLES;
    bound = Math.max(bound, before + Math.ceil(OBSERVABLES / concurrency));
  }
  return Math.max(bound, Math.ceil(calls / app.config.concurrency)) * LATENCY_MS;
}

// One observable first: loads modules lazily loaded on first use, compiles undici's HTTP parser
// and opens first connections, as any running server has done. Reported separately.
const warmup = await run('warmup.com', KEYLESS);

const scenarios = [
  { name: `${OBSERVABLES} domains x ${CORE.join(', ')}`, text: coreDomains.join('\n'), engines: CORE },
  { name: `${OBSERVABLES} domains x ${KEYLESS.length} keyless engines`, text: keylessDomains.join('\n'), engines: KEYLESS },
];
const measured = [];
for (const scenario of scenarios) {
  const cold = await run(scenario.text, scenario.engines);
  const cached = await run(scenario.text, scenario.engines);
  measured.push({ ...scenario, cold, cached, bound: lowerBound(scenario.engines) });
}

// The pages: building the live view of the keyless analysis (what /ui/analyses/<id> sends every
// second while it runs), and the history query over many stored analyses.
const big = measured[1]!.cold.record;
const viewStart = performance.now();
const viewBytes = Buffer.byteLength(JSON.stringify(analysisView(big, app.catalog)));
const viewMs = performance.now() - viewStart;
const allHeld = new Set(big.observables.map((_, i) => i));
const heldBytes = Buffer.byteLength(JSON.stringify(analysisView(big, app.catalog, allHeld)));
const HISTORY = 2000;
const small = measured[0]!.cold.record;
for (let i = 0; i < HISTORY; i++) {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  await app.storage.analyses.set(id, { ...small, id, observables: small.observables.slice(i % 90, (i % 90) + 10), results: small.results.slice(i % 90, (i % 90) + 10) });
}
const historyStart = performance.now();
await historyPage(app.storage, { query: '', page: 1, perPage: 20 });
const historyMs = performance.now() - historyStart;
const searchStart = performance.now();
const found = await historyPage(app.storage, { query: 'site42.com', page: 1, perPage: 20 });
const searchMs = performance.now() - searchStart;

const mb = `Host 10.0.0.5 hit hxxps://evil[.]com/a?b=1 and 2001:db8::1 from a@b.example.org `.repeat(13_000);
const extractStart = performance.now();
const extracted = extractObservables(mb).length;
const extractMs = performance.now() - extractStart;

const rssMb = process.resourceUsage().maxRSS / 1024;
const row = (name: string, value: string) => console.log(`  ${name.padEnd(42)} ${value}`);
console.log(`oas benchmark: upstream fakes answer after ${LATENCY_MS} ms; concurrency ${app.config.concurrency} overall, 8 per engine`);
row('first analysis in the process', `${warmup.ms.toFixed(0)} ms (1 observable, module loading, first connections)`);
for (const m of measured) {
  console.log(m.name);
  row('wall time (cold cache)', `${m.cold.ms.toFixed(0)} ms (${m.cold.failures} engine failures)`);
  row('critical-path lower bound', `${m.bound} ms`);
  row('ratio wall / lower bound (goal <= 1.2)', (m.cold.ms / m.bound).toFixed(2));
  row('wall time (fully cached, goal < 300 ms)', `${m.cached.ms.toFixed(0)} ms (${m.cached.failures} engine failures)`);
}
console.log('pages');
row(`live view of ${OBSERVABLES} x ${KEYLESS.length} engines`, `${viewMs.toFixed(0)} ms to build, ${(viewBytes / 1024).toFixed(0)} KiB of JSON`);
row('the same, every observable already held', `${(heldBytes / 1024).toFixed(1)} KiB (what a poll sends once all are shown)`);
row(`history page 1 of ${HISTORY + 4} analyses`, `${historyMs.toFixed(0)} ms`);
row('history search by observable', `${searchMs.toFixed(0)} ms (${found.total} matches)`);
console.log('process');
row('peak RSS', `${rssMb.toFixed(0)} MiB`);
row('extraction of 1 MB of alert text', `${extractMs.toFixed(0)} ms (${(mb.length / 1e6).toFixed(2)} MB, ${extracted} distinct observables)`);
row('reference, per observable, core engines', `>= ${LATENCY_MS * 12} ms: 1 A + 10 DoH + 1 RDAP round trips one after another`);

await app.close();
fleet.postMessage('close');
await once(fleet, 'exit');
rmSync(dir, { recursive: true, force: true });
