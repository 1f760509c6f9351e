/**
 * A loopback stand-in for Criminal IP's API (provider_05), under `/criminalip/`:
 * `GET /criminalip/v2/feature/ip/suspicious-info?ip=<ip>` answers Criminal IP's full
 * suspicious-info body for any address (a cloud address with one open port and an IDS event).
 * Like Criminal IP, a request without the `x-api-key` header gets HTTP 200 with
 * `{"status": 401, "message": ...}` in the body.
 */
import type { FakeRequest, FakeReply, FakeRoute } from './http.js';

function suspiciousInfo(ip: string): Record<string, unknown> {
  return {
    status: 200,
    ip,
    abuse_record_count: 5,
    representative_domain: 'cloudflare.com',
    score: { inbound: 'Low', outbound: 'Safe' },
    issues: {
      is_vpn: false, is_proxy: false, is_cloud: true, is_tor: false, is_hosting: false, is_mobile: false,
      is_darkweb: false, is_scanner: false, is_snort: true, is_anonymous_vpn: false,
    },
    current_opened_port: {
      count: 1,
      data: [{
        port: 443, is_vulnerability: false, product_name: 'nginx', product_version: '1.20', protocol: 'https',
        socket_type: 'tcp', confirmed_time: '2025-01-01 00:00:00', has_vulnerability: false,
      }],
    },
    ids: {
      count: 1,
      data: [{
        classification: 'Attempted Information Leak', confirmed_time: '2024-12-28 03:11:52',
        message: 'ET SCAN Suspicious inbound to mySQL port 3306', source_system: 'Criminal IP IDS',
        url: `https://www.criminalip.io/asset/report/${ip}`,
      }],
    },
    whois: {
      count: 1,
      data: [{
        as_name: 'CLOUDFLARENET', as_no: 13335, city: 'San Francisco', region: 'California', org_name: 'Cloudflare Inc.',
        postal_code: '94107', latitude: 37.77, longitude: -122.42, org_country_code: 'US', confirmed_time: '2025-01-01 00:00:00',
      }],
    },
    vpn: { count: 0, data: [] },
    hosting: { count: 0, data: [] },
    mobile: { count: 0, data: [] },
  };
}

function answer(req: FakeRequest): FakeReply {
  if (!req.headers['x-api-key']) return { status: 200, json: { status: 401, message: 'invalid api key' } };
  return { status: 200, json: suspiciousInfo(req.query.get('ip') ?? '') };
}

export function fakeRoutes(): Record<string, FakeRoute> {
  return { 'GET /criminalip/v2/feature/ip/suspicious-info': answer };
}

export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/criminalip/v2` };
}
