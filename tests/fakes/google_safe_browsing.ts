/**
 * Loopback stand-in for Google Safe Browsing v5 (safe_browsing), under `/google_safe_browsing/`:
 * `GET /google_safe_browsing/v5alpha1/urls:search?key&urls=<url>` answers, for any URL, that it is
 * listed as SOCIAL_ENGINEERING (JSON, as Google answers by default).
 */
import type { FakeRoute } from './http.js';

/** Google's JSON answer listing each of `urls` with `threatTypes`. */
export function searchUrlsResponse(urls: readonly string[], threatTypes: readonly string[] = ['SOCIAL_ENGINEERING']): Record<string, unknown> {
  return {
    threats: urls.map((url) => ({ url, threatTypes: [...threatTypes] })),
    cacheDuration: '300s',
  };
}

/** `GET /google_safe_browsing/v5alpha1/urls:search`: every URL asked about is listed. */
export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    'GET /google_safe_browsing/v5alpha1/urls:search': (req) => ({ json: searchUrlsResponse(req.query.getAll('urls')) }),
  };
}

/** `engines.safe_browsing` settings for the fake at `url` (without the API key). */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}/google_safe_browsing/v5alpha1` };
}
