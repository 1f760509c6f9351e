/**
 * HTML parsed with cheerio, loaded on the first page parsed rather than at start-up: every `oas`
 * command loads every engine module, and cheerio alone took about 0.14 s of each start.
 */
import { createRequire } from 'node:module';
import type * as cheerio from 'cheerio';

let cheerioModule: typeof cheerio | undefined;

export function loadHtml(html: string): cheerio.CheerioAPI {
  cheerioModule ??= createRequire(import.meta.url)('cheerio') as typeof cheerio;
  return cheerioModule.load(html);
}
