/**
 * provider_10 — ioc.one deep search, PDF reports (engines.md 5.13), scraped. The request and the
 * parsing are shared with provider_09 in src/scrape/ioc-one.ts (where the reference's bugs fixed
 * here are listed).
 */
import { defineEngine, type EngineContext } from '../src/engine/contract.js';
import type { Observable } from '../src/observables/types.js';
import { iocOneDetails, iocOneSearch, iocOneSettingsSchema, iocOneSummary, IOC_ONE_DEFAULTS, IOC_ONE_TYPES, type IocOneResult } from '../src/scrape/ioc-one.js';

export type { IocOneResult, IocOneCard } from '../src/scrape/ioc-one.js';

/** Reports (PDF documents) mentioning the observable; `count: 0` when there are none. */
export function iocOnePdfLookup(observable: Observable, ctx: EngineContext): Promise<IocOneResult> {
  return iocOneSearch(observable, ctx, 'pdf');
}

export default defineEngine<IocOneResult>({
  id: 'provider_10',
  service: 'ioc_one_pdf',
  label: 'Ioc.One (PDF)',
  description: 'Scraped ioc.one deep search: threat reports (PDF documents) mentioning the observable (can be slow)',
  tags: ['domain', 'URL', 'IP', 'hash', 'scraping'],
  types: IOC_ONE_TYPES,
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: IOC_ONE_DEFAULTS,
  settingsSchema: iocOneSettingsSchema,
  summary: iocOneSummary,
  details: iocOneDetails,
  run: iocOnePdfLookup,
});
