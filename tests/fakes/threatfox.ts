/**
 * A loopback abuse.ch ThreatFox API (`POST /threatfox/api/v1/`) answering `search_ioc` with two
 * realistic IOCs for any search term (engines.md 5.27): `fakeRoutes()` for a fake server,
 * `fakeSettings(url)` for `engines.provider_22` pointing at it (the key is the caller's).
 * Like abuse.ch today, a call without an `Auth-Key` header is refused (401 `unknown_auth_key`);
 * `fakeRoutes({ keyless: true })` accepts it, as ThreatFox did for the older catalog (6.4).
 */
import type { FakeRoute } from './http.js';

export const PATH = '/threatfox/api/v1/';

/** One IOC as `search_ioc` lists it. */
export function ioc(id: string, value: string, malware: string | null, printable: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    ioc: value,
    threat_type: 'botnet_cc',
    threat_type_desc: 'Indicator that identifies a botnet command&control server (C&C)',
    ioc_type: /^\d+\.\d+\.\d+\.\d+(:\d+)?$/.test(value) ? 'ip:port' : value.startsWith('http') ? 'url' : 'domain',
    ioc_type_desc: 'Domain that is used for botnet Command&control (C&C)',
    malware,
    malware_printable: printable,
    malware_alias: malware === 'win.cobalt_strike' ? 'Agentemis,BEACON,CobaltStrike,cobeacon' : null,
    malware_malpedia: malware ? `https://malpedia.caad.fkie.fraunhofer.de/details/${malware}` : null,
    confidence_level: 100,
    first_seen: '2025-03-01 10:00:00 UTC',
    last_seen: null,
    reference: 'https://twitter.com/abuse_ch/status/1234567890',
    reporter: 'abuse_ch',
    tags: ['c2', 'CobaltStrike'],
    malware_samples: [],
    ...extra,
  };
}

/** Two Cobalt Strike IOCs and one Emotet IOC for `term`. */
export function hits(term: string): Record<string, unknown> {
  return {
    query_status: 'ok',
    data: [
      ioc('1234567', term, 'win.cobalt_strike', 'Cobalt Strike'),
      ioc('1234568', `${term}:443`, 'win.cobalt_strike', 'Cobalt Strike', { first_seen: '2025-03-02 08:00:00 UTC' }),
      ioc('1234569', `http://${term}/gate.php`, 'win.emotet', 'Emotet', { threat_type: 'payload_delivery' }),
    ],
  };
}

export const NO_RESULT = { query_status: 'no_result', data: 'Your search did not yield any results' };

/** abuse.ch's refusal of a call without (or with an unknown) Auth-Key. */
export const UNKNOWN_AUTH_KEY = { query_status: 'unknown_auth_key' };

export function fakeRoutes(options: { keyless?: boolean } = {}): Record<string, FakeRoute> {
  return {
    [`POST ${PATH}`]: (req) => {
      if (!options.keyless && !req.headers['auth-key']) return { status: 401, json: UNKNOWN_AUTH_KEY };
      let term = '';
      try {
        term = String((JSON.parse(req.body) as { search_term?: unknown }).search_term ?? '');
      } catch {
        return { status: 400, json: { query_status: 'illegal_query' } };
      }
      return { status: 200, json: hits(term) };
    },
  };
}

export function fakeSettings(baseUrl: string): Record<string, unknown> {
  return { base_url: `${baseUrl}${PATH}` };
}
