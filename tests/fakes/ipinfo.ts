/**
 * A stand-in for ipinfo.io (provider_12) under the path prefix `/ipinfo`: `GET /ipinfo/<ip>/json`
 * answers ipinfo's free-plan body (engines.md 5.15's example) for any address. For whole-system
 * tests; the engine's own tests use richer fixtures.
 */
import { reply, type FakeRoute } from './http.js';

export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    'GET /ipinfo/*': (req) => {
      const [ip, format] = req.path.slice('/ipinfo/'.length).split('/');
      if (!ip || format !== 'json') return reply.json({ status: 404, error: { title: 'Wrong ip', message: 'Please provide a valid IP address' } }, 404);
      return reply.json({
        ip,
        hostname: 'dns.google',
        city: 'Mountain View',
        region: 'California',
        country: 'US',
        loc: '37.4056,-122.0775',
        org: 'AS15169 Google LLC',
        postal: '94043',
        timezone: 'America/Los_Angeles',
        anycast: true,
      });
    },
  };
}

/** `engines.provider_12` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/ipinfo` };
}
