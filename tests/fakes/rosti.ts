/**
 * A loopback Rösti IOC API (`GET /rosti/v2/iocs?q=...&pattern=true`) answering two realistic IOCs
 * for any search (engines.md 5.24): `fakeRoutes()` for a fake server, `fakeSettings(url)` for
 * `engines.provider_19` pointing at it (the key is the caller's).
 */
import type { FakeRoute } from './http.js';

export const PREFIX = '/rosti/v2';

/** Two IOCs from two reports for `value`, Rösti's answer to a search for it. */
export function iocs(value: string): Record<string, unknown> {
  return {
    data: [
      {
        id: 'ioc-001', value, type: 'domain', category: 'c2', date: '2025-01-15',
        comment: 'seen in loader config', ids: true, report: 'r-2025-0042', timestamp: 1736899200, risk: 'high',
      },
      {
        id: 'ioc-002', value: `hxxps://${value}/panel/login.php`, type: 'url', category: 'payload_delivery', date: '2025-02-03',
        comment: 'second stage download', ids: false, report: 'r-2025-0107', timestamp: 1738540800, risk: 'medium',
      },
    ],
    meta: { total: 2, has_more: false },
  };
}

export const EMPTY = { data: [], meta: { total: 0, has_more: false } };

export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    [`GET ${PREFIX}/iocs`]: (req) => ({ status: 200, json: iocs(req.query.get('q') ?? '') }),
  };
}

export function fakeSettings(baseUrl: string): Record<string, unknown> {
  return { base_url: `${baseUrl}${PREFIX}` };
}
