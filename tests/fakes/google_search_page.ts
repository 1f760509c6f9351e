/**
 * Loopback stand-in for Google's web search as the older catalog's search_engine scrapes it
 * (engines.md 6.2.a): the basic-HTML results page Google serves a text-mode browser, under
 * `/google/www/`: `GET /google/www/search?q="<value>"&num=7&hl=en&start=<0|10|20>&safe=active&gl=US`.
 *
 * Pages are built as Google writes them: a header with the search box, then one `div.ezO2md`
 * block per hit (`<a href="/url?q=<target>&amp;sa=U&amp;ved=...&amp;usg=...">` holding
 * `span.CVA68e` (title) and the breadcrumb, then `span.FrIlee` with the snippet), with the
 * blocks that are not hits (an ad without a `/url?q=` link, a "related searches" block without
 * any link, an images strip linking back to /search). Also the pages that are not results:
 * Google's consent page, its "unusual traffic" captcha (served with 429 or 200), and a
 * results page without hits.
 */
import { escapeHtml } from '../../src/server/html.js';
import type { FakeReply, FakeRoute, FakeRequest } from './http.js';
import { reply } from './http.js';

export interface FakeHit {
  /** Target page (put into `/url?q=` percent-encoded, as Google does). */
  url: string;
  /** `span.CVA68e` text (escaped); `titleHtml` wins. */
  title?: string;
  titleHtml?: string;
  /** `span.FrIlee` text (escaped); omitted = the block has no description. */
  description?: string;
  descriptionHtml?: string;
  /** Breadcrumb under the title (inside the link, not part of the title). */
  crumb?: string;
  /** Raw href (wins over the `/url?q=` form). */
  href?: string;
}

/** An opaque `ved`/`usg` value like Google's (not part of any hit). */
function token(seed: string, length: number): string {
  let hash = 2166136261;
  for (const ch of seed) hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619) >>> 0;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
  let out = '';
  for (let i = 0; i < length; i++) {
    hash = Math.imul(hash ^ i, 16777619) >>> 0;
    out += alphabet[hash % alphabet.length];
  }
  return out;
}

/** Google's redirect link for a target: `/url?q=<encoded>&sa=U&ved=...&usg=...` (not yet HTML-escaped). */
export function redirectHref(target: string): string {
  return `/url?q=${encodeURIComponent(target)}&sa=U&ved=2ahUKEwi${token(target, 40)}QFnoECAkQAg&usg=AOvVaw${token(`u${target}`, 22)}`;
}

function hitBlock(hit: FakeHit): string {
  const href = escapeHtml(hit.href ?? redirectHref(hit.url));
  const title = hit.titleHtml ?? escapeHtml(hit.title ?? '');
  const crumb = escapeHtml(hit.crumb ?? new URL(hit.url).hostname);
  const description = hit.descriptionHtml ?? (hit.description !== undefined ? escapeHtml(hit.description) : undefined);
  return `<div class="Gx5Zad xpd EtOod pkphOe"><div class="ezO2md"><div><div><a class="fuLhoc ZWRArf" href="${href}">`
    + `<span class="CVA68e qXLe6d fuLhoc ZWRArf">${title}</span> <span class="qXLe6d dXDvrc"><span class="fYyStc">${crumb}</span></span></a></div>`
    + (description !== undefined
      ? `<div class="Dks9wf"><div><div><div><span class="qXLe6d FrIlee"><span class="fYyStc">${description}</span></span></div></div></div></div>`
      : '')
    + `</div></div></div>`;
}

/** A sponsored block: its link goes through Google's ad click URL, not /url?q= (not a hit). */
const AD_BLOCK = `<div class="Gx5Zad xpd EtOod pkphOe"><div class="ezO2md"><div><span class="qXLe6d F9iS2e"><span class="fYyStc">Sponsored</span></span></div>`
  + `<div><a class="fuLhoc ZWRArf" href="/aclk?sa=l&amp;ai=DChcSEwj${token('ad', 30)}&amp;sig=AOD64_${token('sig', 20)}&amp;adurl=&amp;q=">`
  + `<span class="CVA68e qXLe6d fuLhoc ZWRArf">Protect Your Domains - Brand Monitoring 24/7</span></a></div>`
  + `<div class="Dks9wf"><span class="qXLe6d FrIlee"><span class="fYyStc">Free trial. Detect typosquats in minutes.</span></span></div></div></div>`;

/** "Related searches": a block without any link (not a hit). */
function relatedBlock(term: string): string {
  return `<div class="Gx5Zad xpd EtOod pkphOe"><div class="ezO2md"><div class="ilUpNd H66NU aSRlid">`
    + `<span class="qXLe6d x3G5ab"><span class="fYyStc">Related searches</span></span></div>`
    + `<div><span class="qXLe6d"><span class="fYyStc">${escapeHtml(term)} malware</span></span></div>`
    + `<div><span class="qXLe6d"><span class="fYyStc">${escapeHtml(term)} whois</span></span></div></div></div>`;
}

/** An images strip: its link goes back to a Google search (not a hit). */
function imagesBlock(q: string): string {
  return `<div class="Gx5Zad xpd EtOod pkphOe"><div class="ezO2md"><a class="fuLhoc ZWRArf" href="/search?q=${encodeURIComponent(q)}&amp;ie=UTF-8&amp;tbm=isch&amp;source=lnms">`
    + `<span class="CVA68e qXLe6d fuLhoc ZWRArf">Images for ${escapeHtml(q)}</span></a></div></div>`;
}

/** Google's page frame: the header with the search box (form action=/search, input q). */
function frame(q: string, body: string): string {
  return '<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">'
    + '<meta content="/images/branding/googleg/1x/googleg_standard_color_128dp.png" itemprop="image">'
    + `<title>${escapeHtml(q)} - Google Search</title>`
    + '<style>.ezO2md{padding:12px 16px 12px}.CVA68e{color:#1a0dab;font-size:20px}.FrIlee{color:#4d5156}</style>'
    + '<script nonce="bm9uY2U">(function(){window.google={kEI:"Yp3kZ",kEXPI:"0,1302536"};})();</script></head>'
    + '<body><header><div class="l4pQub"><a href="/?sa=X&amp;ved=0ahUKEwi" class="boQfcb"><span class="V6gwVd">G</span></a></div>'
    + `<form class="HrbIJc" id="sf" action="/search" method="GET"><div class="fZ9Nd"><input class="noHIxc" value="${escapeHtml(q)}" autocapitalize="none" autocomplete="off" name="q" spellcheck="false" type="text">`
    + '<input name="hl" type="hidden" value="en"><input name="gl" type="hidden" value="US"></div></form>'
    + '<div class="FElbsf"><span class="OXNnpb">All</span><a class="OXNnpb" href="/search?q=x&amp;tbm=isch">Images</a></div></header>'
    + `<div class="main" id="main"><div id="cnt"><div id="rcnt">${body}</div></div>`
    + '<footer><div class="zF7ue"><a class="rEM8G" href="/search?q=x&amp;start=10">Next &gt;</a></div>'
    + '<div class="Srfpq">United States · <a href="https://policies.google.com/privacy?hl=en">Privacy</a> · <a href="https://policies.google.com/terms?hl=en">Terms</a></div></footer></div>'
    + '<script nonce="bm9uY2U">document.querySelector(".noHIxc").blur();</script></body></html>';
}

/** A results page for the query `q` (as sent, with its quotes) holding these hits. */
export function searchPage(q: string, hits: readonly FakeHit[], options: { ad?: boolean; related?: boolean; images?: boolean } = {}): string {
  const term = q.replace(/^"|"$/g, '');
  const blocks = [
    options.ad ? AD_BLOCK : '',
    options.images ? imagesBlock(q) : '',
    ...hits.map(hitBlock),
    options.related ? relatedBlock(term) : '',
  ];
  return frame(q, blocks.join(''));
}

/** Google's answer when nothing matches: the frame, no hit block. */
export function noResultsPage(q: string): string {
  return frame(q, '<div class="Gx5Zad xpd EtOod pkphOe"><div class="Pb8Pbe">'
    + `<span>Your search - <b>${escapeHtml(q)}</b> - did not match any documents.</span></div>`
    + '<div class="v9i61e"><span>Suggestions:</span><ul><li>Make sure that all words are spelled correctly.</li><li>Try different keywords.</li></ul></div></div>');
}

/** consent.google.com's page, where a client without the consent cookies lands (status 200). */
export const CONSENT_PAGE = '<!DOCTYPE html><html lang="en" dir="ltr"><head><meta charset="utf-8">'
  + '<title>Before you continue to Google</title></head><body><div class="KxvlWc"><h1 class="Nf8Fde">Before you continue to Google</h1>'
  + '<p>We use cookies and data to deliver and maintain Google services.</p>'
  + '<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="bl" value="boq_identityfrontenduiserver_20260105.08_p0">'
  + '<input type="hidden" name="set_eom" value="true"><button aria-label="Reject all">Reject all</button></form>'
  + '<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="set_eom" value="false"><button aria-label="Accept all">Accept all</button></form>'
  + '</div></body></html>';

/** The "sorry" page Google serves a client it blocks (normally with status 429). */
export function sorryPage(q: string): string {
  const continueUrl = `https://www.google.com/search?q=${encodeURIComponent(q)}&num=7&hl=en&start=0&safe=active&gl=US`;
  return '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1">'
    + `<title>${escapeHtml(continueUrl)}</title></head><body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px;">`
    + '<div style="max-width:400px;"><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br>'
    + '<form id="captcha-form" action="index" method="post"><noscript><div style="font-size:13px;">In order to continue, please enable javascript on your web browser.</div></noscript>'
    + '<script src="https://www.google.com/recaptcha/api.js" async defer></script>'
    + `<div id="recaptcha" class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b" data-s="${token(q, 60)}"></div>`
    + `<input type='hidden' name='q' value='${token(`q${q}`, 40)}'><input type="hidden" name="continue" value="${escapeHtml(continueUrl)}"></form>`
    + '<hr noshade size="1" style="color:#ccc; background-color:#ccc;"><div style="font-size:13px;"><b>About this page</b><br><br>'
    + 'Our systems have detected unusual traffic from your computer network.  This page checks to see if it&#39;s really you sending the requests, and not a robot.'
    + '<br><br>IP address: 203.0.113.50<br>Time: 2026-01-10T12:00:00Z<br>URL: ' + escapeHtml(continueUrl) + '<br></div></div></body></html>';
}

/** The first page's hits for a value (engines.md 6.2.a's example first). */
export function firstPageHits(term: string): FakeHit[] {
  return [
    {
      url: 'https://blog.example/2026/10/threat-report',
      title: `Threat report – ${term}`,
      description: `Oct 12, 2026 — … ${term} was used as C2 by the campaign; the infrastructure rotated weekly …`,
      crumb: 'blog.example › 2026 › 10 › threat-report',
    },
    {
      // A target with its own query string: Google percent-encodes it inside q=.
      url: 'https://cert.example/iocs?year=2026&month=10#list',
      title: `Tom & Jerry's "IOC" list <October>`,
      description: `Indicators: ${term}, 203.0.113.7 & 44d88612fea8a8f36de82e1278abb02f …`,
      crumb: 'cert.example › iocs',
    },
    {
      // No description span at all.
      url: 'https://forum.example/t/notes/8841',
      title: `${term} - community notes`,
      crumb: 'forum.example › t › notes',
    },
  ];
}

/** The second page's hits (start=10). */
export function secondPageHits(term: string): FakeHit[] {
  return [
    { url: 'https://sandbox.example/report/9f2c', title: `Sandbox report: ${term}`, description: `DNS request to ${term} at 00:00:03 …` },
    { url: 'https://pastebin.example/raw/Qx8kP2', title: 'Untitled paste', description: `${term}\n203.0.113.9\n…` },
    { url: 'https://feeds.example/blocklist.txt', title: 'Blocklist feed (daily)', description: `# updated daily\n${term}` },
  ];
}

/** Route handler: the page for `start` (0 → first hits, 10 → second hits, beyond → no hit). */
export function pagesByStart(req: FakeRequest): FakeReply {
  const q = req.query.get('q') ?? '';
  const term = q.replace(/^"|"$/g, '');
  const start = req.query.get('start') ?? '0';
  if (start === '0') return reply.html(searchPage(q, firstPageHits(term), { ad: true, related: true }));
  if (start === '10') return reply.html(searchPage(q, secondPageHits(term), { images: true }));
  return reply.html(noResultsPage(q));
}

/** `GET /google/www/search`: results pages for whatever `q` asks, by `start`. */
export function fakeScrapeRoutes(): Record<string, FakeRoute> {
  return { 'GET /google/www/search': pagesByStart };
}

/** `engines.search_engine` settings of the older catalog for the fake at `url` (no key needed). */
export function fakeScrapeSettings(url: string): Record<string, unknown> {
  return { search_url: `${url}/google/www` };
}
