/**
 * Headless Chromium for the browser tests: Debian's /usr/bin/chromium (or $OAS_CHROMIUM) driven
 * by playwright-core, with background networking off (these machines have no internet, and a
 * test never leaves 127.0.0.1). When Chromium is missing, `skipReason` says why the tests skip.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { spawnServe, type ServeProcess } from './serve.js';
import { configFor, startUpstreams, type Upstreams } from './upstreams.js';

export const CHROMIUM = process.env.OAS_CHROMIUM || '/usr/bin/chromium';

/** Screenshots land here (created by the tests; ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../../../test-output/screenshots/', import.meta.url));

/** Why the browser tests cannot run here, or undefined when they can. */
export function skipReason(): string | undefined {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    return `no Chromium at ${CHROMIUM}: install it with "apt-get install -y chromium" (or set OAS_CHROMIUM to a Chromium binary)`;
  }
  return undefined;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface ServedInChromium {
  upstreams: Upstreams;
  server: ServeProcess;
  browser: Browser;
}

/**
 * Before the suite: the upstream fakes, `oas serve` on a configuration for them with `config`
 * added, and Chromium; after it, all three closed. The fields are set once `before` has run.
 */
export function servedInChromium(config: Record<string, unknown> = {}): ServedInChromium {
  const suite = {} as ServedInChromium;
  before(async () => {
    suite.upstreams = await startUpstreams();
    suite.server = await spawnServe(configFor(suite.upstreams, config).file);
    suite.browser = await launchChromium();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.server?.stop();
    await suite.upstreams?.close();
  });
  return suite;
}

/** What the pages of a test asked for and complained about, for its assertions. */
export interface PageWatch {
  requests: string[];
  consoleErrors: string[];
}

/**
 * A fresh context and page: light or dark, desktop (1280 px) or phone (390 px) width, downloads
 * accepted, the clipboard allowed for `origin` when given; every request and console error goes
 * into `watch`.
 */
export async function openPage(
  browser: Browser,
  watch: PageWatch,
  options: { dark?: boolean; phone?: boolean; origin?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    colorScheme: options.dark ? 'dark' : 'light',
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    acceptDownloads: true,
  });
  if (options.origin) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.origin });
  const page = await context.newPage();
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('console', (message) => message.type() === 'error' && watch.consoleErrors.push(message.text()));
  page.on('pageerror', (error) => watch.consoleErrors.push(error.message));
  return { context, page };
}

/**
 * A fresh page (1280 px wide) signed in with `token` through the sign-in form of the server at
 * `baseUrl`, at `path`. Its console errors go into `consoleErrors`, but those whose text matches
 * `expected` (the statuses a test provokes: 401 by default, asked before signing in).
 */
export async function signedInPage(browser: Browser, baseUrl: string, token: string, path: string, consoleErrors: string[], expected = /401/): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('console', (message) => message.type() === 'error' && !expected.test(message.text()) && consoleErrors.push(message.text()));
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  await page.goto(`${baseUrl}/signin?next=${encodeURIComponent(path)}`);
  await page.fill('#token', token);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${baseUrl}${path}`);
  return page;
}
