/**
 * The benchmark's upstream fakes, run in a worker thread so that their CPU time is not charged
 * to the analysis being measured (the machine has two cores). Posts the engine settings back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Zone } from '../fakes/dns.js';
import { exampleCom } from '../fakes/rdap.js';
import { startUpstreams } from '../helpers/upstreams.js';

const { domains, latencyMs } = workerData as { domains: string[]; latencyMs: number };

const zone: Zone = {};
domains.forEach((d, i) => {
  zone[d] = { A: [`93.184.${Math.floor(i / 250)}.${(i % 250) + 1}`], NS: [`ns1.${d}`], MX: [`10 mx.${d}`], TXT: ['v=spf1 -all'] };
  zone[`_dmarc.${d}`] = { TXT: ['v=DMARC1; p=none'] };
});

const upstreams = await startUpstreams({ latencyMs, zone });
for (const d of domains) upstreams.rdap.serve(d, { ...exampleCom, ldhName: d.toUpperCase() });
parentPort!.postMessage(upstreams.settings);
parentPort!.on('message', async (message) => {
  if (message === 'close') {
    await upstreams.close();
    parentPort!.close();
  }
});
