/**
 * A stand-in for Shodan's host API (provider_20) under the path prefix `/shodan`:
 * `GET /shodan/shodan/host/<ip>` answers a host with SSH, HTTP and HTTPS banners for any address;
 * `GET /shodan/api-info` the key's plan (with `key`, only that key).
 * For whole-system tests; the engine's own tests use richer fixtures.
 */
import { reply, type FakeRoute } from './http.js';

export function fakeRoutes(options: { key?: string } = {}): Record<string, FakeRoute> {
  return {
    // What `oas doctor` asks: the key's plan and credits (developer.shodan.io/api), 401 for a key
    // Shodan does not know.
    'GET /shodan/api-info': (req) => {
      const key = req.query.get('key');
      if (!key || (options.key !== undefined && key !== options.key)) return reply.json({ error: 'Please provide a valid API key.' }, 401);
      return reply.json({ scan_credits: 100, usage_limits: { scan_credits: 100, query_credits: 100, monitored_ips: 16 }, plan: 'dev', https: false, unlocked: true, query_credits: 100, monitored_ips: null, unlocked_left: 100, telnet: false });
    },
    'GET /shodan/shodan/host/*': (req) => {
      const ip = req.path.slice('/shodan/shodan/host/'.length);
      const banner = (port: number, product: string, version: string, module: string) => ({
        ip_str: ip, port, transport: 'tcp', product, version, hostnames: ['edge.example.net'], domains: ['example.net'],
        org: 'Example Hosting', isp: 'Example Hosting', asn: 'AS64500', os: null, timestamp: '2026-01-08T11:02:17.334612',
        location: { city: 'Frankfurt am Main', country_code: 'DE', country_name: 'Germany', latitude: 50.11, longitude: 8.68 },
        _shodan: { module, crawler: '2ab5fa4e3b3f3e9a4b1e6c9d0f2d7a8c1e5b3f60', id: 'b0c5f0a4-0000-4000-8000-000000000000', ptr: true },
        data: `${product} ${version}\r\n`,
      });
      return reply.json({
        ip_str: ip,
        ip: 0,
        ports: [22, 80, 443],
        tags: ['cloud'],
        hostnames: ['edge.example.net'],
        domains: ['example.net'],
        org: 'Example Hosting',
        isp: 'Example Hosting',
        asn: 'AS64500',
        os: null,
        country_code: 'DE',
        country_name: 'Germany',
        city: 'Frankfurt am Main',
        region_code: 'HE',
        latitude: 50.11,
        longitude: 8.68,
        last_update: '2026-01-08T11:02:17.334612',
        vulns: ['CVE-2023-38408'],
        data: [
          banner(22, 'OpenSSH', '8.9p1 Ubuntu-3ubuntu0.6', 'ssh'),
          banner(80, 'nginx', '1.18.0', 'http'),
          banner(443, 'nginx', '1.18.0', 'https'),
        ],
      });
    },
  };
}

/** `engines.provider_20` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/shodan` };
}
