/**
 * `npm run bench`: 100 observables with reverse_dns, rdap_whois and public_dns against loopback
 * fakes that add a fixed latency to every answer. Prints the wall time, the critical-path lower
 * bound (perfect parallelism within the concurrency settings), their ratio, peak RSS, the same
 * analysis fully cached, and extraction speed on 1 MB of text. Not a test: nothing is asserted.
 */
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { createApp } from '../../src/app.js';
import { extractObservables } from '../../src/observables/extract.js';
import { configFor, type Upstreams } from '../helpers/upstreams.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 50);
const OBSERVABLES = Number(process.env.BENCH_OBSERVABLES ?? 100);
const ENGINES = ['reverse_dns', 'rdap_whois', 'public_dns'];

const domains = Array.from({ length: OBSERVABLES }, (_, i) => `site${i}.com`);

// The fakes run in a worker thread: their CPU time must not count against the analysis.
const fleet = new Worker(new URL('./fleet.js', import.meta.url), { workerData: { domains: [...domains, 'warmup.com'], latencyMs: LATENCY_MS } });
const [settings] = (await once(fleet, 'message')) as [Upstreams['settings']];
const { file, dir } = configFor({ settings } as Upstreams);
const app = await createApp({ file, env: {} });

const run = async (text = domains.join('\n')) => {
  const started = performance.now();
  const record = await app.analyses.runToEnd({ text, engines: ENGINES });
  const ms = performance.now() - started;
  const failures = record.results.reduce((n, r) => n + Object.keys(r?.errors ?? {}).length, 0);
  return { ms, failures };
};

// One observable first: loads modules lazily loaded on first use, compiles undici's HTTP parser
// and opens first connections, as any running server has done. Reported separately.
const warmup = await run('warmup.com');
const cold = await run();
const cached = await run();

// Lower bound: every engine call costs its round trips of latency; calls of one engine run at
// most `concurrency` at a time, all calls at most `config.concurrency` at a time. rdap_whois
// also downloads the bootstrap file once before its first record.
const roundTrips: Record<string, number> = { reverse_dns: 1, rdap_whois: 1, public_dns: 1 };
const oneTime: Record<string, number> = { rdap_whois: 1 };
const perEngine = ENGINES.map((id) => {
  const engine = app.catalog.find(id)!;
  const concurrency = app.runner.settingsFor(engine).concurrency;
  return (Math.ceil(OBSERVABLES / concurrency) * roundTrips[id]! + (oneTime[id] ?? 0)) * LATENCY_MS;
});
const overall = Math.ceil((OBSERVABLES * ENGINES.length) / app.config.concurrency) * LATENCY_MS;
const lowerBound = Math.max(...perEngine, overall);

const mb = `Host 10.0.0.5 hit hxxps://evil[.]com/a?b=1 and 2001:db8::1 from a@b.example.org `.repeat(13_000);
const extractStart = performance.now();
const extracted = extractObservables(mb).length;
const extractMs = performance.now() - extractStart;

const rssMb = process.resourceUsage().maxRSS / 1024;
const row = (name: string, value: string) => console.log(`${name.padEnd(44)} ${value}`);
console.log(`oas benchmark: ${OBSERVABLES} observables x ${ENGINES.join(', ')}; upstream latency ${LATENCY_MS} ms per answer`);
console.log(`settings: concurrency ${app.config.concurrency} overall, per engine ${ENGINES.map((id) => app.runner.settingsFor(app.catalog.find(id)!).concurrency).join('/')}`);
row('first analysis in the process (1 observable)', `${warmup.ms.toFixed(0)} ms (module loading, first connections)`);
row('wall time (cold cache)', `${cold.ms.toFixed(0)} ms (${cold.failures} engine failures)`);
row('critical-path lower bound', `${lowerBound} ms`);
row('ratio wall / lower bound (goal <= 1.2)', (cold.ms / lowerBound).toFixed(2));
row('wall time (fully cached, goal < 300 ms)', `${cached.ms.toFixed(0)} ms (${cached.failures} engine failures)`);
row('peak RSS', `${rssMb.toFixed(0)} MiB`);
row('extraction of 1 MB of alert text', `${extractMs.toFixed(0)} ms (${(mb.length / 1e6).toFixed(2)} MB, ${extracted} distinct observables)`);
row('reference (sequential engines per observable)', `>= ${(LATENCY_MS * (1 + 10 + 1)).toFixed(0)} ms per observable: 1 A + 10 DoH + 1 RDAP round trips in a row`);

await app.close();
fleet.postMessage('close');
await once(fleet, 'exit');
rmSync(dir, { recursive: true, force: true });
