/**
 * A stand-in for webscout.io (provider_25) under the path prefix `/webscout`:
 * `GET /webscout/query/ip/<ip>` answers engines.md 5.30's example body for any address.
 * For whole-system tests; the engine's own tests use richer fixtures.
 */
import { reply, type FakeRoute } from './http.js';

/** engines.md 5.30's example body (Cloudflare's 1.1.1.1), for the address `ip`. */
export function webscoutAnswer(ip: string) {
  return {
    status: 'success',
    data: {
      ip,
      location: { country_iso: 'US', city: 'Los Angeles' },
      network: { type: 'hosting', service: 'CDN', region: 'us-west' },
      company: { name: 'Cloudflare, Inc.', business: ['CDN', 'DNS'], description: 'Web infrastructure and security company' },
      as: { as_number: 13335, organization: 'CLOUDFLARENET' },
      anonymization: { proxy: false, tor: false, vpn: false },
      osint: { services: [{ tags: ['scanner'] }, { tags: ['scanner', 'botnet'] }] },
      hostnames: ['one.one.one.one'],
    },
  };
}

export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    'GET /webscout/query/ip/*': (req) => reply.json(webscoutAnswer(req.path.slice('/webscout/query/ip/'.length))),
  };
}

/** `engines.provider_25` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/webscout` };
}
