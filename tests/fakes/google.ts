/**
 * Loopback stand-in for Google's Custom Search JSON API (search_engine), under `/google/`:
 * `GET /google/customsearch/v1?key&cx&q="<value>"` answers a realistic first result page for any
 * value (three hits, Google's full page layout, including the `queries.request[0].cx` echo the
 * real API sends back — the engine must not pass it on).
 */
import type { FakeRoute } from './http.js';

/** The search engine id the fake settings use (a credential: it must not appear in results). */
export const FAKE_CX = 'FAKE-CX-017576662512468239146';

/** A full Custom Search answer for the query `q` (as sent, with its quotes). */
export function cseResponse(q: string, cx = FAKE_CX, total = 1240): Record<string, unknown> {
  const term = q.replace(/^"|"$/g, '');
  const items = [
    {
      title: `Threat report – ${term}`,
      link: 'https://blog.example/2026/10/threat-report',
      displayLink: 'blog.example',
      snippet: `… ${term} was used as C2 by the campaign; the infrastructure rotated weekly …`,
    },
    {
      title: `IOC list October 2026 | Example CERT`,
      link: 'https://cert.example/iocs/2026-10.txt',
      displayLink: 'cert.example',
      snippet: `Indicators: ${term}, 203.0.113.7, 44d88612fea8a8f36de82e1278abb02f …`,
    },
    {
      title: `${term} - community notes`,
      link: 'https://forum.example/t/notes/8841',
      displayLink: 'forum.example',
      snippet: `Anyone seen ${term} in their logs? We blocked it at the proxy.`,
    },
  ].map((item) => ({
    kind: 'customsearch#result',
    title: item.title,
    htmlTitle: item.title.replace(term, `<b>${term}</b>`),
    link: item.link,
    displayLink: item.displayLink,
    snippet: item.snippet,
    htmlSnippet: item.snippet.replace(term, `<b>${term}</b>`),
    formattedUrl: item.link,
    htmlFormattedUrl: item.link,
    pagemap: { metatags: [{ 'og:type': 'article', 'og:title': item.title }] },
  }));
  const request = {
    title: `Google Custom Search - ${q}`,
    totalResults: String(total),
    searchTerms: q,
    count: 10,
    startIndex: 1,
    inputEncoding: 'utf8',
    outputEncoding: 'utf8',
    safe: 'off',
    cx,
  };
  return {
    kind: 'customsearch#search',
    url: {
      type: 'application/json',
      template: 'https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}&start={startIndex?}&lr={language?}&safe={safe?}&cx={cx?}&sort={sort?}&filter={filter?}&gl={gl?}&cr={cr?}&googlehost={googleHost?}&c2coff={disableCnTwTranslation?}&hq={hq?}&hl={hl?}&siteSearch={siteSearch?}&siteSearchFilter={siteSearchFilter?}&exactTerms={exactTerms?}&excludeTerms={excludeTerms?}&linkSite={linkSite?}&orTerms={orTerms?}&dateRestrict={dateRestrict?}&lowRange={lowRange?}&highRange={highRange?}&searchType={searchType}&fileType={fileType?}&rights={rights?}&imgSize={imgSize?}&imgType={imgType?}&imgColorType={imgColorType?}&imgDominantColor={imgDominantColor?}&alt=json',
    },
    queries: { request: [request], nextPage: [{ ...request, startIndex: 11 }] },
    context: { title: 'oas' },
    searchInformation: { searchTime: 0.312456, formattedSearchTime: '0.31', totalResults: String(total), formattedTotalResults: total.toLocaleString('en-US') },
    items,
  };
}

/** `GET /google/customsearch/v1`: a result page for whatever `q` asks. */
export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    'GET /google/customsearch/v1': (req) => ({ json: cseResponse(req.query.get('q') ?? '', req.query.get('cx') ?? FAKE_CX) }),
  };
}

/** `engines.search_engine` settings for the fake at `url` (the cx included; the API key not). */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/google/customsearch/v1`, cx: FAKE_CX };
}
