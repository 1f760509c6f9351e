/**
 * The HTML documents of the pages: a small escaped shell that loads one module from /assets.
 * Every page's content is built in the browser from JSON and put in as text, never as HTML.
 */
import { escapeHtml } from './html.js';

export type PageName = 'index' | 'results' | 'history' | 'watchlists' | 'allowlist' | 'observable';

export interface ShellOptions {
  title: string;
  /** Which module runs the page; omitted for static pages (not found). */
  page?: PageName;
  /** `data-*` attributes of <body> the page's module reads (API prefix, analysis id). */
  data?: Record<string, string>;
  /** Static content of <main> (escaped by the caller). */
  main?: string;
}

const NAV: { href: string; label: string; page: PageName }[] = [
  { href: '/', label: 'Analyze', page: 'index' },
  { href: '/history', label: 'History', page: 'history' },
  { href: '/watchlists', label: 'Watchlists', page: 'watchlists' },
  { href: '/allowlist', label: 'Allowlist', page: 'allowlist' },
];

export function renderShell(options: ShellOptions): string {
  const data = Object.entries(options.data ?? {})
    .map(([key, value]) => ` data-${key}="${escapeHtml(value)}"`)
    .join('');
  const nav = NAV.map((item) => `<a href="${item.href}"${item.page === options.page ? ' aria-current="page"' : ''}>${item.label}</a>`).join('');
  const script = options.page ? `<script type="module" src="/assets/${options.page}.js"></script>` : '';
  const noscript = options.page ? '<noscript><p class="notice">This page needs JavaScript. The JSON API under the configured prefix gives the same data.</p></noscript>' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/oas.css">
${script}
</head>
<body${data}>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar"><a class="brand" href="/" aria-label="oas home"><span class="brand-mark" aria-hidden="true"></span>oas</a><nav aria-label="Main">${nav}</nav></header>
<main id="main" tabindex="-1">${noscript}${options.main ?? ''}</main>
</body>
</html>
`;
}
