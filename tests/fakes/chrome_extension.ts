/**
 * The two web stores the chrome_extension engine scrapes (engines.md 9.5), as loopback fakes:
 * - the Chrome Web Store: `GET <chrome>/detail/<id>` answers 301 to `/detail/<slug>/<id>`, whose
 *   page carries the name in its first `<h1>` (server-rendered store page: header, search box,
 *   canonical link, Open Graph tags, inline scripts); an id it does not list gets Google's
 *   `Error 404 (Not Found)!!1` page;
 * - Edge Add-ons: `GET <edge>/addons/detail/<id>` answers the single-page application's shell,
 *   whose `<title>` is `<Name> - Microsoft Edge Addons`; an id it does not list gets the same
 *   shell with the bare title `Microsoft Edge Addons` (status 200).
 * Also the pages that are not store pages (Google's consent page, its "unusual traffic" captcha,
 * the store's home page). The pages are constructed from engines.md's minimal examples, filled
 * out as the stores render them; the ids are real store ids, the "Auto-Refresh Plus" one excepted
 * (made up, for the hyphen in its name).
 *
 * Whole-system tests: `fakeRoutes()` serves both stores under `/chromewebstore` and `/edgeaddons`,
 * `fakeSettings(url)` points `engines.chrome_extension` at them.
 */
import { escapeHtml } from '../../src/server/html.js';
import { reply, type FakeReply, type FakeRequest, type FakeRoute } from './http.js';

export interface StoreItem {
  name: string;
  /** The store's URL slug (`ublock-origin`). */
  slug: string;
  description: string;
}

/** uBlock Origin on the Chrome Web Store (engines.md 9.5.2's example). */
export const UBLOCK_CHROME_ID = 'cjpalhdlnbpafiamejdnhcphjbkeiagm';
/** Google Translate on the Chrome Web Store (the id the reference's third-party CLI tests with). */
export const TRANSLATE_CHROME_ID = 'aapbdbdomjkkjkaonfhkkikfgjllcleb';
/** uBlock Origin on Edge Add-ons (engines.md 9.5.2's example): not on the Chrome Web Store. */
export const UBLOCK_EDGE_ID = 'odfafepnkmbhccpbejgmiehpchacaeak';
/** A made-up Edge-only id whose name holds a hyphen (engines.md 9.5.2's quirk). */
export const AUTO_REFRESH_EDGE_ID = 'kbmgpmhkgejmgbpnjkldnhibhjaojaph';
/** Listed by neither store. */
export const UNKNOWN_ID = 'pppppppppppppppppppppppppppppppp';

export const CHROME_ITEMS: Record<string, StoreItem> = {
  [UBLOCK_CHROME_ID]: { name: 'uBlock Origin', slug: 'ublock-origin', description: 'Finally, an efficient blocker. Easy on CPU and memory.' },
  [TRANSLATE_CHROME_ID]: { name: 'Google Translate', slug: 'google-translate', description: 'View translations easily as you browse the web. By the Google Translate team.' },
};

export const EDGE_ITEMS: Record<string, StoreItem> = {
  [UBLOCK_EDGE_ID]: { name: 'uBlock Origin', slug: 'ublock-origin', description: 'Finally, an efficient blocker. Easy on CPU and memory.' },
  [AUTO_REFRESH_EDGE_ID]: { name: 'Auto-Refresh Plus', slug: 'autorefresh-plus', description: 'Automatically refresh and reload pages or tabs after a countdown.' },
};

const CHROME_ORIGIN = 'https://chromewebstore.google.com';
const EDGE_ORIGIN = 'https://microsoftedge.microsoft.com';

/** A Chrome Web Store detail page. `nameHtml` replaces the `<h1>`'s escaped name (raw markup). */
export function chromeDetailPage(id: string, item: StoreItem, options: { nameHtml?: string } = {}): string {
  const page = `${CHROME_ORIGIN}/detail/${item.slug}/${id}`;
  const name = escapeHtml(item.name);
  return `<!doctype html><html lang="en-US" dir="ltr"><head><base href="${CHROME_ORIGIN}/"><meta name="referrer" content="origin"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} - Chrome Web Store</title>
<link rel="canonical" href="${page}">
<meta property="og:site_name" content="Chrome Web Store"><meta property="og:type" content="website">
<meta property="og:title" content="${name} - Chrome Web Store"><meta property="og:url" content="${page}">
<meta property="og:description" content="${escapeHtml(item.description)}">
<meta property="og:image" content="https://lh3.googleusercontent.com/rrgyVBVte7CfjjeTU-rCHDKba7vtq-yn3o8-10p6l8wFbc8bq9xhH4Ifly07Ua5Ui6HcgJi8cRMT_FDDYFHpS9lVbw=s128-rj-sc0x00ffffff">
<style nonce="Uo3dZ1qv2HcGkBvW1i0pVQ">.Pa2dE{font-family:"Google Sans",Roboto,Arial,sans-serif;font-size:1.75rem;line-height:2.25rem}</style>
<script nonce="Uo3dZ1qv2HcGkBvW1i0pVQ">window.WIZ_global_data = {"Im6cmf":"/_/ChromeWebStoreConsumerFeUi","w2btAe":"%.@.null,null,\\"\\"]","h1":"not a heading"};</script>
</head><body jscontroller="pjICDe" class="EIlDfe"><c-wiz jsrenderer="hJQ8Pb" class="SSPGKf" data-p="%.@.[[\\"${id}\\"]]">
<header class="a9nMSd"><a href="./" class="wJd7Ad" aria-label="Chrome Web Store"><img src="https://www.gstatic.com/chrome/webstore/images/logo.svg" alt="" width="32" height="32"><span class="PrlJmc">chrome web store</span></a>
<div class="BxZmJd" role="search"><form action="./search" method="get"><input class="BQbODd" type="text" name="q" aria-label="Search extensions and themes" placeholder="Search extensions and themes"></form></div>
<nav class="cLdDYe"><a href="./category/extensions">Extensions</a> <a href="./category/themes">Themes</a></nav></header>
<main class="kFS6nf"><div class="M2rbQb"><section class="mkI3lb" aria-labelledby="item-title">
<img class="rBxtY" src="https://lh3.googleusercontent.com/rrgyVBVte7CfjjeTU-rCHDKba7vtq-yn3o8-10p6l8wFbc8bq9xhH4Ifly07Ua5Ui6HcgJi8cRMT_FDDYFHpS9lVbw=s60" alt="Item logo image for ${name}">
<h1 class="Pa2dE" id="item-title">${options.nameHtml ?? name}</h1>
<div class="cJI8ee"><a class="cJI8ee" href="https://ublockorigin.com" target="_blank" rel="noopener">ublockorigin.com</a><span class="OmOMFc">Featured</span></div>
<div class="Vq0ZA">4.7<span class="GvZmud"> out of 5 stars</span><a href="./detail/${item.slug}/${id}/reviews">29.9K ratings</a></div>
<p class="F9iKBc">Extension<span> · </span>Workflow &amp; Planning<span> · </span>39,000,000 users</p>
<button class="UywwFc-LgbsSe" type="button"><span class="UywwFc-vQzf8d">Add to Chrome</span></button>
</section><section class="RNnO5e"><h2 class="gVpP0d">Overview</h2><p>${escapeHtml(item.description)}</p></section>
<section class="mtgzG"><h2 class="gVpP0d">Details</h2><ul><li>Version 1.62.0</li><li>Updated February 14, 2025</li><li>Size 3.88MiB</li><li>Languages 54 languages</li></ul></section>
</div></main>
<footer class="lPLdjb"><a href="https://www.google.com/intl/en/policies/privacy/">Privacy Policy</a> <a href="https://support.google.com/chrome_webstore/answer/1047776">Help</a></footer>
</c-wiz><script nonce="Uo3dZ1qv2HcGkBvW1i0pVQ">AF_initDataCallback({key: 'ds:0', hash: '1', data:["${id}","<h1>${name}</h1>"], sideChannel: {}});</script></body></html>`;
}

/** Google's own 404 page (what the Chrome Web Store answers for an id it does not list). */
export function googleNotFoundPage(path: string): string {
  return `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <meta name=viewport content="initial-scale=1, minimum-scale=1, width=device-width">
  <title>Error 404 (Not Found)!!1</title>
  <style>*{margin:0;padding:0}html,code{font:15px/22px arial,sans-serif}html{background:#fff;color:#222;padding:15px}body{margin:7% auto 0;max-width:390px;min-height:180px;padding:30px 0 15px}</style>
  <a href=//www.google.com/><span id=logo aria-label=Google></span></a>
  <p><b>404.</b> <ins>That’s an error.</ins>
  <p>The requested URL <code>${escapeHtml(path)}</code> was not found on this server.  <ins>That’s all we know.</ins>
`;
}

/**
 * The Chrome Web Store's home page (where a store may send an address it does not know): a page
 * with a heading, but whose canonical address is not an extension's.
 */
export const CHROME_HOME_PAGE = `<!doctype html><html lang="en-US" dir="ltr"><head><base href="${CHROME_ORIGIN}/">
<title>Chrome Web Store</title><link rel="canonical" href="${CHROME_ORIGIN}/"><meta property="og:title" content="Chrome Web Store"><meta property="og:url" content="${CHROME_ORIGIN}/">
</head><body><header class="a9nMSd"><a href="./" aria-label="Chrome Web Store">chrome web store</a><form action="./search"><input type="text" name="q" aria-label="Search extensions and themes"></form></header>
<main><h1 class="pDOOz">Discover great apps, games, extensions and themes for Google Chrome</h1><section><h2>Top categories</h2><a href="./category/extensions/productivity/workflow">Workflow &amp; Planning</a></section></main></body></html>`;

/** A store page without any `<h1>` (the store's generic page, og:title `Chrome Web Store`). */
export const CHROME_GENERIC_PAGE = `<!doctype html><html lang="en-US"><head><title>Chrome Web Store</title><meta property="og:title" content="Chrome Web Store"></head>
<body><header><a href="./" aria-label="Chrome Web Store">chrome web store</a></header><main><div class="qH5Grc">This item is not available</div></main></body></html>`;

/** Google's cookie consent page (served instead of the store page in some countries). */
export const CONSENT_PAGE = `<!DOCTYPE html><html lang="en" dir="ltr"><head><meta charset="utf-8"><title>Before you continue</title></head>
<body><div class="KxvlWc"><h1 class="I90TVb" id="S3BnEe">Before you continue to Google</h1>
<p>We use cookies and data to deliver and maintain Google services.</p>
<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="set_eom" value="true"><input type="hidden" name="continue" value="${CHROME_ORIGIN}/detail/${UBLOCK_CHROME_ID}"><button>Reject all</button></form>
<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="set_eom" value="false"><button>Accept all</button></form></div></body></html>`;

/** Google's "unusual traffic" interstitial (the captcha of /sorry/index). */
export const CAPTCHA_PAGE = `<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1"><title>${CHROME_ORIGIN}/detail/${UBLOCK_CHROME_ID}</title></head>
<body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px;">
<div style="max-width:400px;"><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br>
<form id="captcha-form" action="index" method="post"><div class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b"></div><input type='hidden' name='q' value='EhAgAQ'><input type="hidden" name="continue" value="${CHROME_ORIGIN}/detail/${UBLOCK_CHROME_ID}"></form>
<hr noshade size="1" style="color:#ccc; background-color:#ccc;"><div style="font-size:13px;"><b>About this page</b><br><br>Our systems have detected unusual traffic from your computer network.  This page checks to see if it&#39;s really you sending the requests, and not a robot.</div></div></body></html>`;

/**
 * An Edge Add-ons page: the single-page application's shell, rendered by the browser; only the
 * `<title>` (and the meta tags) carry the add-on. `item` absent: the shell the store serves for an
 * id it does not list, with the bare title.
 */
export function edgeDetailPage(id: string, item?: StoreItem): string {
  const title = item ? `${escapeHtml(item.name)} - Microsoft Edge Addons` : 'Microsoft Edge Addons';
  const meta = item
    ? `<meta name="description" content="${escapeHtml(item.description)}">
<link rel="canonical" href="${EDGE_ORIGIN}/addons/detail/${item.slug}/${id}">
<meta property="og:title" content="${title}"><meta property="og:url" content="${EDGE_ORIGIN}/addons/detail/${item.slug}/${id}">
<meta property="og:image" content="https://store-images.s-microsoft.com/image/apps.31867.a2b5c2bb-5f1c-4b09-9a6e-7a7b7a7f2d43">`
    : '<meta name="description" content="Add-ons for Microsoft Edge">';
  return `<!DOCTYPE html><html lang="en-US" dir="ltr"><head><meta charset="utf-8"><meta http-equiv="X-UA-Compatible" content="IE=edge">
<meta name="viewport" content="width=device-width,initial-scale=1,shrink-to-fit=no"><link rel="shortcut icon" href="/addons/static/favicon.ico">
<title>${title}</title>
${meta}
<link href="/addons/static/css/main.9d1c3a0b.chunk.css" rel="stylesheet"></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
<script>window.__PRELOADED_STATE__={"locale":"en-US","market":"US","productId":"${id}"};</script>
<script src="/addons/static/js/2.4f3b1d8e.chunk.js"></script><script src="/addons/static/js/main.7b9c0e1a.chunk.js"></script></body></html>`;
}

/** Chrome Web Store routes under `prefix`: `/detail/<id>` redirects to `/detail/<slug>/<id>`. */
export function chromeRoutes(prefix: string, items: Record<string, StoreItem> = CHROME_ITEMS): Record<string, FakeRoute> {
  return {
    [`GET ${prefix}/detail/*`]: (req: FakeRequest): FakeReply => {
      const parts = req.path.slice(`${prefix}/detail/`.length).split('/');
      const id = parts[parts.length - 1] ?? '';
      const item = items[id];
      if (!item) return { status: 404, headers: { 'content-type': 'text/html; charset=UTF-8' }, body: googleNotFoundPage(req.path) };
      if (parts.length === 1) return { status: 301, headers: { location: `${prefix}/detail/${item.slug}/${id}`, 'content-type': 'text/html; charset=UTF-8' }, body: '' };
      return reply.html(chromeDetailPage(id, item));
    },
  };
}

/** Edge Add-ons routes under `prefix`: `/addons/detail/<id>`; unknown ids get the bare shell (200). */
export function edgeRoutes(prefix: string, items: Record<string, StoreItem> = EDGE_ITEMS): Record<string, FakeRoute> {
  return {
    [`GET ${prefix}/addons/detail/*`]: (req: FakeRequest): FakeReply => {
      const id = req.path.split('/').pop() ?? '';
      return reply.html(edgeDetailPage(id, items[id]));
    },
  };
}

/** Both stores, for whole-system tests: the Chrome Web Store under `/chromewebstore`, Edge Add-ons under `/edgeaddons`. */
export function fakeRoutes(): Record<string, FakeRoute> {
  return { ...chromeRoutes('/chromewebstore'), ...edgeRoutes('/edgeaddons') };
}

/** `engines.chrome_extension` settings for the fake at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/chromewebstore`, edge_base_url: `${url}/edgeaddons` };
}
