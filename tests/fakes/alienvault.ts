/**
 * A loopback stand-in for AlienVault OTX's indicator API (provider_02), under `/alienvault/`:
 * `GET /alienvault/api/v1/indicators/<section>/<value>/general` answers OTX's "general" section
 * for any value — two pulses (one citing a report, one without references), related malware
 * families and adversaries — in OTX's full shape. Like OTX, a request without the
 * `X-OTX-API-KEY` header is refused (403).
 */
import type { FakeRequest, FakeReply, FakeRoute } from './http.js';

const PREFIX = '/alienvault/api/v1/indicators/';

const TYPE_TITLES: Record<string, string> = { IPv4: 'IPv4', IPv6: 'IPv6', domain: 'Domain', hostname: 'Hostname', file: 'FileHash-SHA256' };

const SECTIONS: Record<string, string[]> = {
  IPv4: ['general', 'geo', 'reputation', 'url_list', 'passive_dns', 'malware', 'nids_list', 'http_scans'],
  IPv6: ['general', 'geo', 'reputation', 'url_list', 'passive_dns', 'malware'],
  domain: ['general', 'geo', 'url_list', 'passive_dns', 'malware', 'whois', 'http_scans'],
  file: ['general', 'analysis'],
};

function pulse(id: string, name: string, created: string, references: string[], adversary: string, families: string[]): Record<string, unknown> {
  return {
    id,
    name,
    description: `${name}: indicators collected by the OTX community.`,
    modified: created,
    created,
    tags: ['botnet', 'c2'],
    references,
    public: 1,
    adversary,
    targeted_countries: ['United States of America'],
    malware_families: families.map((family) => ({ id: family, display_name: family, target: null })),
    attack_ids: [{ id: 'T1071', name: 'Application Layer Protocol', display_name: 'T1071 - Application Layer Protocol' }],
    industries: ['Technology'],
    TLP: 'white',
    cloned_from: null,
    export_count: 12,
    upvotes_count: 0,
    downvotes_count: 0,
    votes_count: 0,
    locked: false,
    pulse_source: 'web',
    validator_count: 0,
    comment_count: 0,
    follower_count: 0,
    vote: 0,
    author: { username: 'AlienVault', id: '2', avatar_url: 'https://otx20-web-media.s3.amazonaws.com/media/avatars/user_2/resized/80/avatar_3b9c358f36.png', is_subscribed: false, is_following: false },
    indicator_type_counts: { IPv4: 41, domain: 12, 'FileHash-SHA256': 7 },
    indicator_count: 60,
    is_author: false,
    is_subscribing: null,
    subscriber_count: 248000,
    modified_text: '120 days ago ',
    is_modified: false,
    groups: [],
    in_group: false,
    threat_hunter_scannable: true,
    threat_hunter_has_agents: 1,
    related_indicator_type: 'IPv4',
    related_indicator_is_active: 1,
  };
}

/** OTX's general section for `indicator` in `section`. */
function general(section: string, indicator: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    sections: SECTIONS[section] ?? ['general'],
    indicator,
    type: section === 'file' ? 'FileHash-SHA256' : section,
    type_title: TYPE_TITLES[section] ?? section,
    validation: [],
    base_indicator: { id: 3012569114, indicator, type: section, title: '', description: '', content: '', access_type: 'public', access_reason: '' },
    pulse_info: {
      count: 2,
      pulses: [
        pulse('6626a0b8f2c6e2d0f0a1b2c3', 'Commodity RAT infrastructure', '2024-04-22T17:41:12.870000', [], '', ['AsyncRAT']),
        pulse('686b20fc7023e207712491d9', 'Mirai botnet C2', '2025-07-07T01:21:00.423000', ['https://blog.example/report'], 'APT99', ['Mirai']),
      ],
      references: ['https://blog.example/report'],
      related: {
        alienvault: { adversary: [], malware_families: ['Emotet'], industries: [] },
        other: { adversary: ['Lazarus'], malware_families: ['Apnic'], industries: ['Technology'] },
      },
    },
    false_positive: [],
  };
  if (section === 'IPv4' || section === 'IPv6') {
    Object.assign(body, {
      whois: `http://whois.domaintools.com/${indicator}`,
      reputation: 0,
      asn: 'AS15169 google llc',
      city_data: true,
      city: 'Mountain View',
      region: 'CA',
      continent_code: 'NA',
      country_code3: 'USA',
      country_code2: 'US',
      subdivision: 'CA',
      latitude: 37.4056,
      postal_code: '94043',
      longitude: -122.0775,
      accuracy_radius: 1000,
      country_code: 'US',
      country_name: 'United States of America',
      dma_code: 807,
      charset: 0,
      area_code: 0,
      flag_url: '/assets/images/flags/us.png',
      flag_title: 'United States of America',
    });
  } else if (section === 'domain') {
    Object.assign(body, { whois: `http://whois.domaintools.com/${indicator}`, alexa: `http://www.alexa.com/siteinfo/${indicator}` });
  }
  return body;
}

function answer(req: FakeRequest): FakeReply {
  if (!req.headers['x-otx-api-key']) return { status: 403, json: { detail: 'Authentication credentials were not provided.' } };
  const [section = '', indicator = '', part = ''] = req.path.slice(PREFIX.length).split('/');
  if (part !== 'general' || !SECTIONS[section]) return { status: 404, json: { detail: 'Not found.' } };
  return { status: 200, json: general(section, indicator) };
}

export function fakeRoutes(): Record<string, FakeRoute> {
  return { [`GET ${PREFIX}*`]: answer };
}

export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/alienvault/api/v1` };
}
