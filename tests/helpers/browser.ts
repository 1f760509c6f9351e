/**
 * Headless Chromium for the browser tests: Debian's /usr/bin/chromium (or $OAS_CHROMIUM) driven
 * by playwright-core, with background networking off (these machines have no internet, and a
 * test never leaves 127.0.0.1). When Chromium is missing, `skipReason` says why the tests skip.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';

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
