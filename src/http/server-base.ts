/** The `base_url` of a self-hosted server (MISP, OpenCTI, DFIR-IRIS, Spectra Analyze...). */
import { EngineError, type EngineContext } from '../engine/contract.js';

/**
 * `base_url` without trailing slashes, any path kept (`https://tools.example/misp`); a one-line
 * error naming the setting when it is missing or no http(s) URL. `service` starts the message.
 */
export function serverBase(ctx: EngineContext, service: string): string {
  const raw = typeof ctx.settings.base_url === 'string' ? ctx.settings.base_url.trim() : '';
  if (raw === '') throw new EngineError('not configured: base_url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EngineError(`${service}: base_url is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError(`${service}: base_url must be an http(s) URL`);
  return raw.replace(/\/+$/, '');
}
