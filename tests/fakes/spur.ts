/**
 * Loopback stand-ins for Spur (provider_21, engines.md 5.26 and 6.3):
 * - the context API under `/spur`: `GET /spur/v2/context/<ip>` answers Spur's context object for
 *   any address (a NordVPN exit for 89.187.1.1, a residential IPv6 line, a plain data-centre
 *   host for anything else). Like Spur, a request without the `Token` header is refused (401),
 *   and with `fakeRoutes({ token })` so is any other token (401);
 * - the public context page under `/spur-web`: `GET /spur-web/context/<ip>` answers the HTML page
 *   the older catalog scrapes, its `<title>` carrying the anonymity label.
 * `fakeSettings(url)` / `fakeOlderSettings(url)` give `engines.provider_21` pointing at them (the
 * token is the caller's).
 */
import { isIP } from 'node:net';
import type { FakeReply, FakeRequest, FakeRoute } from './http.js';

export const API_PREFIX = '/spur/v2/context/';
export const PAGE_PREFIX = '/spur-web/context/';

/** engines.md 5.26's example: a NordVPN exit, completed as Spur sends it. */
export function nordVpnContext(ip = '89.187.1.1'): Record<string, unknown> {
  return {
    ip,
    as: { number: 60068, organization: 'Datacamp Limited' },
    organization: 'Datacamp Limited',
    infrastructure: 'DATACENTER',
    client: {
      behaviors: ['FILE_SHARING'],
      concentration: { country: 'US', state: 'California', city: 'Los Angeles', geohash: '9q5c', density: 0.2, skew: 4 },
      count: 12,
      countries: 5,
      proxies: [],
      spread: 2_402_110,
      types: ['DESKTOP'],
    },
    location: { city: 'Paris', country: 'FR', state: 'Ile-de-France' },
    risks: ['TUNNEL', 'CALLBACK_PROXY'],
    services: ['OPENVPN'],
    tunnels: [{ anonymous: true, operator: 'NORD_VPN', type: 'VPN', entries: ['89.187.1.0'], exits: [ip] }],
  };
}

/** A data-centre host Spur knows nothing anonymous about: no tunnels, no risks. */
export function plainContext(ip: string): Record<string, unknown> {
  return {
    ip,
    as: { number: 15169, organization: 'Google LLC' },
    organization: 'Google LLC',
    infrastructure: 'DATACENTER',
    location: { city: 'Mountain View', country: 'US', state: 'California' },
  };
}

/** A residential IPv6 line behind a callback proxy: a tunnel without an operator, then one with. */
export function residentialProxyContext(ip: string): Record<string, unknown> {
  return {
    ip,
    as: { number: 3320, organization: 'Deutsche Telekom AG' },
    organization: 'Deutsche Telekom AG',
    client: { behaviors: [], count: 3, proxies: ['LUMINATI_PROXY'], types: ['MOBILE', 'DESKTOP'] },
    location: { city: 'Berlin', country: 'DE', state: 'Land Berlin' },
    risks: ['CALLBACK_PROXY', 'GEO_MISMATCH'],
    services: [],
    tunnels: [{ anonymous: true, type: 'PROXY' }, { anonymous: true, operator: 'LUMINATI_PROXY', type: 'PROXY' }],
  };
}

/** Spur's context for any address: the fixtures above by address. */
export function contextFor(ip: string): Record<string, unknown> {
  if (ip === '89.187.1.1') return nordVpnContext(ip);
  if (ip.startsWith('2003:')) return residentialProxyContext(ip);
  return plainContext(ip);
}

/** Spur's public context page for `ip`; the title carries `(label)` when `label` is given. */
export function contextPage(ip: string, label?: string): string {
  const title = label ? `${ip} (${label}) | Spur` : `${ip} | Spur Context`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <meta name="description" content="IP context for ${ip}: VPN, proxy and residential proxy detection by Spur.">
  <link rel="stylesheet" href="/_next/static/css/app.css">
</head>
<body>
  <main>
    <h1>${ip}</h1>
    <section class="context-card">
      <h2>${label ? 'Anonymous' : 'Not Anonymous'}</h2>
      <p>${label ? `This IP address is part of the ${label} network.` : 'This IP address is not associated with a known anonymization service.'}</p>
    </section>
  </main>
  <script src="/_next/static/chunks/main.js" defer></script>
</body>
</html>`;
}

/** The Cloudflare-style challenge Spur puts in front of its pages for clients it distrusts. */
export const CAPTCHA_PAGE = `<!DOCTYPE html>
<html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="refresh" content="390"></head>
<body><div id="challenge-running">Verifying you are human. This may take a few seconds.</div>
<form id="challenge-form" action="/context/89.187.1.1?__cf_chl_f_tk=abc" method="POST"><div class="cf-turnstile"></div></form></body></html>`;

export const UNAUTHORIZED = { error: 'invalid token' };

/** The API's answer: 401 without the token (or with another one than `token`), else the context. */
export function apiAnswer(req: FakeRequest, token?: string): FakeReply {
  const sent = req.headers.token;
  if (typeof sent !== 'string' || sent === '' || (token !== undefined && sent !== token)) return { status: 401, json: UNAUTHORIZED };
  const ip = req.path.split('/').pop() ?? '';
  if (isIP(ip) === 0) return { status: 400, json: { error: 'invalid ip address' } };
  return { status: 200, json: contextFor(ip) };
}

/** The public page's answer: NordVPN for 89.187.1.1, not anonymous for anything else. */
export function pageAnswer(req: FakeRequest): FakeReply {
  const ip = req.path.split('/').pop() ?? '';
  if (isIP(ip) === 0) return { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<html><head><title>Not Found | Spur</title></head></html>' };
  return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: contextPage(ip, ip === '89.187.1.1' ? 'NordVPN' : undefined) };
}

export function fakeRoutes(options: { token?: string } = {}): Record<string, FakeRoute> {
  return {
    [`GET ${API_PREFIX}*`]: (req) => apiAnswer(req, options.token),
    [`GET ${PAGE_PREFIX}*`]: pageAnswer,
  };
}

/** `engines.provider_21` (main catalog) for a fake at `url`, without the token. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/spur` };
}

/** `engines.provider_21` (older catalog: the scraped page) for a fake at `url`. */
export function fakeOlderSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/spur-web` };
}
