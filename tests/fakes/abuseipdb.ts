/**
 * A loopback stand-in for AbuseIPDB's v2 API (provider_03), under `/abuseipdb/`:
 * `GET /abuseipdb/api/v2/check?ipAddress=<ip>` answers AbuseIPDB's full `check` body for any
 * address (a reported data-centre address). Like AbuseIPDB, a request without the `Key` header
 * is refused (401) and a value that is not an IP address is rejected (422), with AbuseIPDB's
 * `{"errors": [...]}` bodies.
 */
import { isIP } from 'node:net';
import type { FakeRequest, FakeReply, FakeRoute } from './http.js';

function check(ip: string): Record<string, unknown> {
  return {
    data: {
      ipAddress: ip,
      isPublic: true,
      ipVersion: isIP(ip),
      isWhitelisted: false,
      abuseConfidenceScore: 87,
      countryCode: 'NL',
      usageType: 'Data Center/Web Hosting/Transit',
      isp: 'DigitalOcean LLC',
      domain: 'digitalocean.com',
      hostnames: ['scanner-07.example.net'],
      isTor: false,
      totalReports: 214,
      numDistinctUsers: 61,
      lastReportedAt: '2026-01-09T23:14:05+00:00',
    },
  };
}

function answer(req: FakeRequest): FakeReply {
  if (!req.headers.key) {
    return {
      status: 401,
      json: { errors: [{ detail: 'Authentication failed. Your API key is either missing, incorrect, or revoked. Note: The APIv2 key differs from the APIv1 key.', status: 401 }] },
    };
  }
  const ip = req.query.get('ipAddress') ?? '';
  if (isIP(ip) === 0) {
    return {
      status: 422,
      json: { errors: [{ detail: 'The ip address must be a valid IPv4 or IPv6 address (e.g. 8.8.8.8 or 2001:4860:4860::8888).', status: 422, source: { parameter: 'ipAddress' } }] },
    };
  }
  return { status: 200, headers: { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999' }, json: check(ip) };
}

export function fakeRoutes(): Record<string, FakeRoute> {
  return { 'GET /abuseipdb/api/v2/check': answer };
}

export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/abuseipdb/api/v2` };
}
