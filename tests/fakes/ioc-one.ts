/**
 * ioc.one deep-search pages for the scraping engines (provider_09 HTML reports, provider_10 PDF
 * reports): full Bootstrap pages as the site renders them (navbar, search form, result cards as
 * engines.md 5.13 describes them), the pages that are not results (captcha, login wall, changed
 * layout), and a route builder for `startFakeHttp` answering by the `search` parameter.
 *
 * Text is HTML-escaped as the site's templates do; `titleHtml` puts raw markup in a title for the
 * tests that check scraped text stays text.
 */
import type { FakeReply, FakeRoute } from './http.js';
import { reply } from './http.js';
import { escapeHtml } from '../../src/server/html.js';

export type Variant = 'html' | 'pdf';

export interface FakeCard {
  /** `.card-header` text; omitted = no header element. */
  header?: string;
  /** `h5.card-title` text; omitted = no title element. */
  title?: string;
  /** Raw HTML inside the h5 (wins over title). */
  titleHtml?: string;
  /** href of the source button; omitted = no source button. */
  source?: string;
  /** Paragraph under the title (the matching excerpt). */
  snippet?: string;
  /** Override of the card's class attribute (default `card box-shadow my-1`). */
  cardClass?: string;
  /** Override of the source button's class (default `btn border btn-primary m-1` / `mx-1`). */
  sourceClass?: string;
}

export const PATHS: Record<Variant, string> = { html: '/auth/deep_search', pdf: '/auth/deep_search/pdf' };

/** Report cards of the HTML page (the first is engines.md 5.13's example). */
export const HTML_CARDS: FakeCard[] = [
  {
    header: '2024-05-14 · securelist.com',
    title: 'New campaign uses evil.example.com',
    source: 'https://securelist.com/report',
    snippet: '… the loader beacons to evil.example.com over HTTPS every 300 seconds …',
  },
  {
    header: '2024-04-02 · unit42.paloaltonetworks.com',
    title: 'Threat Brief: Exploitation of  CVE-2024-3400\n      in PAN-OS',
    source: 'https://unit42.paloaltonetworks.com/cve-2024-3400/',
    snippet: 'Indicators: evil.example.com, 203.0.113.45',
  },
  {
    header: '2024-03-21 · www.welivesecurity.com',
    title: 'Evasive Panda leverages Monlam Festival to target Tibetans',
    source: 'https://www.welivesecurity.com/en/eset-research/evasive-panda-leverages-monlam-festival-target-tibetans/',
  },
  {
    header: '2024-02-29 · blog.talosintelligence.com',
    title: 'TinyTurla Next Generation — Turla APT spies on Polish NGOs',
    source: 'https://blog.talosintelligence.com/tinyturla-next-generation/',
  },
  {
    header: '2024-01-17 · www.mandiant.com',
    title: 'Ivanti Connect Secure VPN Post-Exploitation Lateral Movement Case Studies',
    source: 'https://www.mandiant.com/resources/blog/investigating-ivanti-zero-day-exploitation',
  },
  {
    header: '2023-12-05 · research.checkpoint.com',
    title: 'Israel-Hamas War Spotlight: Shaking the Rust Off SysJoker',
    source: 'https://research.checkpoint.com/2023/israel-hamas-war-spotlight-shaking-the-rust-off-sysjoker/',
  },
  {
    header: '2023-11-30 · www.microsoft.com',
    title: 'Star Blizzard increases sophistication and evasion in ongoing attacks',
    source: 'https://www.microsoft.com/en-us/security/blog/2023/12/07/star-blizzard-increases-sophistication/',
  },
];

/** Report cards of the PDF page: documents hosted on ioc.one itself (relative links) or elsewhere. */
export const PDF_CARDS: FakeCard[] = [
  {
    header: '2024-05-02 · Kaspersky ICS CERT',
    title: 'APT attacks on industrial organizations in H2 2023',
    source: '/static/pdf/2024/kaspersky-ics-apt-h2-2023.pdf',
    snippet: 'C2: evil.example.com (p. 14)',
  },
  {
    header: '2024-02-07 · CISA',
    title: 'AA24-038A PRC State-Sponsored Actors Compromise U.S. Critical Infrastructure',
    source: 'https://www.cisa.gov/sites/default/files/2024-02/aa24-038a-jcsa-prc-state-sponsored-actors.pdf',
  },
  {
    header: '2023-10-19 · ioc.one mirror',
    title: 'Operation Triangulation — technical appendix',
    source: 'reports/triangulation-appendix.pdf',
  },
];

function cardHtml(card: FakeCard, variant: Variant, index: number): string {
  const margin = variant === 'html' ? 'm-1' : 'mx-1';
  const lines = [`      <div class="${card.cardClass ?? 'card box-shadow my-1'}">`];
  if (card.header !== undefined) lines.push(`        <div class="card-header">${escapeHtml(card.header)}</div>`);
  lines.push('        <div class="card-body">');
  if (card.titleHtml !== undefined) lines.push(`          <h5 class="card-title">${card.titleHtml}</h5>`);
  else if (card.title !== undefined) lines.push(`          <h5 class="card-title">${escapeHtml(card.title)}</h5>`);
  if (card.snippet !== undefined) lines.push(`          <p class="card-text small text-muted">${escapeHtml(card.snippet)}</p>`);
  lines.push('          <div class="d-flex flex-wrap">');
  // A details button first (same look, no new tab): it must not be taken for the source.
  lines.push(`            <a class="btn border btn-secondary ${margin}" href="/auth/report/${1000 + index}">Details</a>`);
  if (card.source !== undefined) {
    lines.push(`            <a class="${card.sourceClass ?? `btn border btn-primary ${margin}`}" target="_blank" rel="noopener" href="${escapeHtml(card.source)}">${variant === 'html' ? 'Source' : 'PDF'}</a>`);
  }
  lines.push('          </div>', '        </div>', '      </div>');
  return lines.join('\n');
}

function layout(title: string, main: string, extraHead = ''): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1, shrink-to-fit=no">
  <title>${title}</title>
  <link rel="stylesheet" href="/static/css/bootstrap.min.css">
  <link rel="icon" href="/static/favicon.ico">
  <script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>
  ${extraHead}
</head>
<body class="bg-light">
  <nav class="navbar navbar-expand-lg navbar-dark bg-dark">
    <a class="navbar-brand" href="/">IOC.one</a>
    <ul class="navbar-nav mr-auto">
      <li class="nav-item"><a class="nav-link" href="/auth/deep_search">Deep search</a></li>
      <li class="nav-item"><a class="nav-link" href="/auth/deep_search/pdf">PDF search</a></li>
      <li class="nav-item"><a class="nav-link" href="/about">About</a></li>
    </ul>
  </nav>
${main}
  <footer class="text-center text-muted small my-3">IOC.one — threat reports indexed for analysts</footer>
  <script src="/static/js/jquery.slim.min.js"></script>
  <script src="/static/js/bootstrap.bundle.min.js"></script>
</body>
</html>
`;
}

function searchForm(variant: Variant, query: string): string {
  return `    <form class="form-inline my-3" action="${PATHS[variant]}" method="get">
      <input class="form-control mr-2 w-50" type="search" name="search" placeholder="IP, domain, URL, hash…" value="${escapeHtml(query)}" aria-label="Search">
      <button class="btn btn-outline-primary" type="submit">Search</button>
    </form>`;
}

/** A results page: the search form, a count line, and one card per entry. */
export function resultsPage(variant: Variant, query: string, cards: readonly FakeCard[]): string {
  const heading = variant === 'html' ? 'Deep search' : 'Deep search (PDF reports)';
  const main = `  <div class="container">
    <h3 class="mt-3">${heading}</h3>
${searchForm(variant, query)}
    <p class="text-muted">${cards.length} result(s) for <code>${escapeHtml(query)}</code></p>
    <div class="row">
     <div class="col-md-12">
${cards.map((card, i) => cardHtml(card, variant, i)).join('\n')}
     </div>
    </div>
  </div>`;
  return layout(`IOC.one - ${heading}`, main);
}

/** The same page with no hit: the form and a message, no card. */
export function emptyPage(variant: Variant, query: string): string {
  const main = `  <div class="container">
    <h3 class="mt-3">Deep search</h3>
${searchForm(variant, query)}
    <div class="alert alert-info" role="alert">No results found for <code>${escapeHtml(query)}</code>.</div>
  </div>`;
  return layout('IOC.one - Deep search', main);
}

/** A Cloudflare-style bot check served with 200 instead of the page. */
export const CAPTCHA_PAGE = `<!DOCTYPE html>
<html lang="en-US">
<head><title>Just a moment...</title><meta http-equiv="refresh" content="390"></head>
<body>
  <div class="main-wrapper" role="main">
    <div class="main-content">
      <h1 class="zone-name-title h1">ioc.one</h1>
      <h2 class="h2" id="challenge-running">Verifying you are human. This may take a few seconds.</h2>
      <form id="challenge-form" action="/auth/deep_search?__cf_chl_f_tk=abc" method="POST">
        <div class="cf-turnstile" data-sitekey="0x4AAAAAAA"></div>
        <input type="hidden" name="md" value="xyz">
      </form>
    </div>
  </div>
</body>
</html>
`;

/** /auth/... redirected to the login form (followed by the client: 200 with this page). */
export const LOGIN_PAGE = layout('IOC.one - Login', `  <div class="container" style="max-width: 420px">
    <h3 class="mt-5">Sign in</h3>
    <form method="post" action="/login?next=%2Fauth%2Fdeep_search">
      <input type="hidden" name="csrf_token" value="IjQ1ZTI">
      <div class="form-group"><label for="email">E-mail</label><input class="form-control" id="email" type="email" name="email"></div>
      <div class="form-group"><label for="password">Password</label><input class="form-control" id="password" type="password" name="password"></div>
      <button class="btn btn-primary" type="submit">Sign in</button>
    </form>
  </div>`);

/** A redesign: results are now a list, no card and no search form the parser knows. */
export function changedLayoutPage(query: string): string {
  return layout('IOC.one - Search', `  <main class="search">
    <div id="search-box" data-query="${escapeHtml(query)}"></div>
    <ul class="result-list">
      <li class="result"><span class="date">2024-05-14</span> <a href="https://securelist.com/report">New campaign uses evil.example.com</a></li>
      <li class="result"><span class="date">2024-04-02</span> <a href="https://unit42.paloaltonetworks.com/cve-2024-3400/">Threat Brief</a></li>
    </ul>
  </main>`);
}

/** The application's own error page, served with 200 (as Flask error handlers sometimes do). */
export const ERROR_PAGE = layout('IOC.one - Error', `  <div class="container">
    <div class="alert alert-danger mt-5">Something went wrong. Please try again later.</div>
  </div>`);

/**
 * Routes for `startFakeHttp`: `GET /auth/deep_search` (and `/pdf`) answering, by the `search`
 * parameter, with `answers[value]` (an HTML string or a reply/handler), else the empty page.
 */
export function iocOneRoutes(variant: Variant, answers: Record<string, string | FakeRoute> = {}): Record<string, FakeRoute> {
  return {
    [`GET ${PATHS[variant]}`]: (req) => {
      const query = req.query.get('search') ?? '';
      const answer = answers[query];
      if (answer === undefined) return reply.html(emptyPage(variant, query));
      if (typeof answer === 'string') return reply.html(answer);
      return typeof answer === 'function' ? answer(req) : (answer as FakeReply);
    },
  };
}
