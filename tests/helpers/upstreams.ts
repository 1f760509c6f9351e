/**
 * Every upstream the registered engines talk to, as loopback fakes with one realistic data set:
 * DNS over UDP (reverse_dns, provider_01), DNS-over-HTTPS JSON (public_dns), RDAP bootstrap and
 * registry records, WHOIS over TCP (rdap_whois, rdap), and the keyless intelligence APIs.
 * `configFor` writes a configuration file pointing every engine at them, for the server and CLI
 * tests and the benchmark: nothing leaves 127.0.0.1.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeDns, type FakeDnsServer, type Zone } from '../fakes/dns.js';
import { dohHandler } from '../fakes/doh.js';
import { startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { intelSettings, startFakeIntel } from '../fakes/intel.js';
import { startFakeRdap, type FakeRdap } from '../fakes/rdap.js';
import { startFakeWhois, type FakeWhoisServer } from '../fakes/whois.js';
import { tempDir } from './temp.js';

export const ZONE: Zone = {
  'example.com': {
    A: ['93.184.215.14'],
    AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    MX: ['10 mx1.example.com'],
    NS: ['a.iana-servers.net', 'b.iana-servers.net'],
    TXT: ['v=spf1 -all', 'google-site-verification=abc'],
    SOA: 'ns.icann.org noc.dns.icann.org 2024081404 7200 3600 1209600 3600',
  },
  'www.example.com': { A: ['93.184.215.14'] },
  '_dmarc.example.com': { TXT: ['v=DMARC1; p=reject; sp=reject'] },
  'cyberbro.net': { A: ['172.67.197.226', '104.21.42.7'], NS: ['anderson.ns.cloudflare.com', 'lisa.ns.cloudflare.com'] },
  '8.8.8.8.in-addr.arpa': { PTR: ['dns.google'] },
  '14.215.184.93.in-addr.arpa': { PTR: ['edge.example.com'] },
  '8.8.8.8.abuse-contacts.abusix.zone': { TXT: ['network-abuse@google.com'] },
  '14.215.184.93.abuse-contacts.abusix.zone': { TXT: ['abuse@edgecast.com'] },
};

export interface Upstreams {
  dns: FakeDnsServer;
  doh: FakeHttpServer;
  rdap: FakeRdap;
  whois: FakeWhoisServer;
  /** Every keyless intelligence API (ipapi, ipquery, grep.app, urlscan, ...). */
  intel: FakeHttpServer;
  /** The `engines` and `dns_servers` settings pointing at the fakes. */
  settings: { dns_servers: string[]; engines: Record<string, Record<string, unknown>> };
  close(): Promise<void>;
}

export interface UpstreamOptions {
  /** Added to every DNS, DoH and RDAP answer (benchmark). */
  latencyMs?: number;
  zone?: Zone;
}

export async function startUpstreams(options: UpstreamOptions = {}): Promise<Upstreams> {
  const zone = options.zone ?? ZONE;
  const latency = options.latencyMs ?? 0;
  const dns = await startFakeDns(zone, { latencyMs: latency });
  const doh = await startFakeHttp({ 'GET /resolve': dohHandler(zone) }, { latencyMs: latency });
  const rdap = await startFakeRdap({ latencyMs: latency });
  const whois = await startFakeWhois({});
  const intel = await startFakeIntel({ latencyMs: latency });
  return {
    dns,
    doh,
    rdap,
    whois,
    intel,
    settings: {
      dns_servers: [dns.address],
      engines: {
        ...intelSettings(intel.url),
        public_dns: { base_url: `${doh.url}/resolve` },
        rdap_whois: { bootstrap_url: rdap.bootstrapUrl, whois_iana_server: whois.address, whois_server: whois.address },
        rdap: { bootstrap_url: rdap.bootstrapUrl },
      },
    },
    close: async () => {
      await Promise.all([dns.close(), doh.close(), rdap.http.close(), whois.close(), intel.close()]);
    },
  };
}

/** A fresh data directory and a configuration file for it (removed at exit, see temp.ts); returns their paths. */
export function configFor(upstreams: Upstreams, extra: Record<string, unknown> = {}): { dir: string; file: string; dataDir: string } {
  const dir = tempDir('oas-test-');
  const dataDir = join(dir, 'data');
  const file = join(dir, 'oas.config.json');
  const engines = { ...upstreams.settings.engines };
  for (const [id, values] of Object.entries((extra.engines as Record<string, Record<string, unknown>> | undefined) ?? {})) {
    engines[id] = { ...engines[id], ...values };
  }
  writeFileSync(file, JSON.stringify({ data_dir: dataDir, dns_servers: upstreams.settings.dns_servers, ...extra, engines }, null, 2));
  return { dir, file, dataDir };
}

/**
 * A configuration of one engine (`id`, ipquery by default) at its loopback fake, as a user's would
 * be, and a data folder of its own: the file's path. An engine the file gives settings its own
 * schema checks is loaded for that check (src/engine/declarations.ts).
 */
export function oneEngineConfig(upstreams: Upstreams, id = 'provider_13'): string {
  const fakes = configFor(upstreams);
  const file = join(fakes.dir, 'one-engine.json');
  writeFileSync(file, JSON.stringify({ data_dir: fakes.dataDir, dns_servers: upstreams.settings.dns_servers, engines: { [id]: upstreams.settings.engines[id] } }));
  return file;
}
