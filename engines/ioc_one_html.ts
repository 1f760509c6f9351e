/**
 * provider_09 — ioc.one deep search, HTML reports (engines.md 5.13), scraped. The request and the
 * parsing are shared with provider_10 in src/scrape/ioc-one.ts (where the reference's bugs fixed
 * here are listed).
 */
import { defineEngine, type EngineContext } from '../src/engine/contract.js';
import type { Observable } from '../src/observables/types.js';
import { iocOneDetails, iocOneSearch, iocOneSettingsSchema, iocOneSummary, IOC_ONE_DEFAULTS, IOC_ONE_TYPES, type IocOneResult } from '../src/scrape/ioc-one.js';

export type { IocOneResult, IocOneCard } from '../src/scrape/ioc-one.js';

/** Reports (web pages) mentioning the observable; `count: 0` when there are none. */
export function iocOneHtmlLookup(observable: Observable, ctx: EngineContext): Promise<IocOneResult> {
  return iocOneSearch(observable, ctx, 'html');
}

export default defineEngine<IocOneResult>({
  id: 'provider_09',
  service: 'ioc_one_html',
  label: 'Ioc.One (HTML)',
  description: 'Scraped ioc.one deep search: threat reports (web pages) mentioning the observable (can be slow)',
  tags: ['domain', 'URL', 'IP', 'hash', 'scraping'],
  types: IOC_ONE_TYPES,
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: IOC_ONE_DEFAULTS,
  settingsSchema: iocOneSettingsSchema,
  summary: iocOneSummary,
  details: iocOneDetails,
  run: iocOneHtmlLookup,
});
